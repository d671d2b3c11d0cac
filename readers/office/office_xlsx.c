#include "office.h"
int tr_office_xlsx(const struct tr_office_doc *d, struct tr_result *res) { (void)res; return tr_office_zip_fail(d->z, TR_E_UNSUPPORTED, "x"); }
