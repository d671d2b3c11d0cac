/* SPDX-License-Identifier: MIT */
/* expect.h - tiny EXPECT macros for the C unit tests: count failures, report file:line, never abort. */
#ifndef TR_EXPECT_H
#define TR_EXPECT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int expect_failures;
static int expect_checks;

#define EXPECT(cond)                                                                              \
	do {                                                                                      \
		expect_checks++;                                                                  \
		if (!(cond)) {                                                                    \
			expect_failures++;                                                        \
			fprintf(stderr, "%s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                                 \
	} while (0)

#define EXPECT_INT(a, b)                                                                      \
	do {                                                                                  \
		long long expect_a_ = (long long)(a), expect_b_ = (long long)(b);             \
		expect_checks++;                                                              \
		if (expect_a_ != expect_b_) {                                                 \
			expect_failures++;                                                    \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
				__LINE__, #a, expect_a_, #b, expect_b_);                      \
		}                                                                             \
	} while (0)

#define EXPECT_STR(a, b)                                                                    \
	do {                                                                                \
		const char *expect_a_ = (a), *expect_b_ = (b);                              \
		expect_checks++;                                                            \
		if (!expect_a_ || !expect_b_ || strcmp(expect_a_, expect_b_) != 0) {        \
			expect_failures++;                                                  \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, #a, expect_a_ ? expect_a_ : "(null)",             \
				expect_b_ ? expect_b_ : "(null)");                          \
		}                                                                           \
	} while (0)

/* Prints "N passed, N failed" (a closing line CI reads) and returns the exit status. */
#define EXPECT_DONE()                                                                        \
	(printf("%d passed, %d failed\n", expect_checks - expect_failures, expect_failures), \
	 expect_failures ? 1 : 0)

#endif
