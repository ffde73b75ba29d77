/* report — what users read: human tables, JSON with the field names of docs/json.md, CSV.
 * Every function returns a newly allocated string (g_free); output is deterministic. */
#ifndef DDP_REPORT_H
#define DDP_REPORT_H

#include <glib.h>
#include "bucket.h"
#include "ddp.h"
#include "scenario.h"

char *ddp_report_predict_text(const DdpScenario *scenario, const DdpResult *result);
char *ddp_report_predict_json(const DdpScenario *scenario, const DdpResult *result);
char *ddp_report_predict_csv(const DdpScenario *scenario, const DdpResult *result);

char *ddp_report_buckets_text(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt);
char *ddp_report_buckets_json(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt);
char *ddp_report_buckets_csv(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt);

/* "25 557 032"-style grouping for tables. */
char *ddp_report_group_digits(gint64 value);

#endif
