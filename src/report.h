/* report — what users read: human tables, JSON with the field names of docs/json.md, CSV.
 * Every function returns a newly allocated string (g_free); output is deterministic. */
#ifndef DDP_REPORT_H
#define DDP_REPORT_H

#include <glib.h>
#include "bucket.h"
#include "cost.h"
#include "ddp.h"
#include "scenario.h"

char *ddp_report_predict_text(const DdpScenario *scenario, const DdpResult *result);
char *ddp_report_predict_json(const DdpScenario *scenario, const DdpResult *result);
/* What a verb adds to predict's report. */
typedef struct {
  const DdpCost *cost;        /* NULL: no cost and time-to-train fields */
  gboolean no_buckets;        /* text: leave the bucket schedule out (predict --no-buckets) */
} DdpReportExtras;

/* As above with @extras (NULL: none).  The text summarises a schedule of more than
 * DDP_REPORT_BUCKET_ROWS buckets: the first and last half of that many rows and a count of the
 * rest (--json and --csv always list every bucket). */
#define DDP_REPORT_BUCKET_ROWS 24
char *ddp_report_predict_text_ex(const DdpScenario *scenario, const DdpResult *result, const DdpReportExtras *extras);
char *ddp_report_predict_json_ex(const DdpScenario *scenario, const DdpResult *result, const DdpReportExtras *extras);
char *ddp_report_predict_csv(const DdpScenario *scenario, const DdpResult *result);

char *ddp_report_buckets_text(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt);
char *ddp_report_buckets_json(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt);
char *ddp_report_buckets_csv(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt);

/* Why ZeRO-1 and FSDP can scale above 100 % (predict and compare say it where one does). */
#define DDP_REPORT_ABOVE_100 "above 100 %: each GPU steps the optimizer on its 1/N shard, T(1 GPU) on everything"

/* The cross-rack caveat of a DDP report (ddp_collective_domains_caveat, the ring asked for with the
 * cluster's [nccl] algorithm), each line begun with @prefix; NULL where it does not apply or
 * @result is NULL (a row not simulated). */
char *ddp_report_domains_caveat(const DdpScenario *scenario, const DdpResult *result, const char *prefix);

/* The transport caveat of a DDP report (ddp_collective_transport_caveat for the nodes @result spans),
 * each line begun with @prefix; NULL where it does not apply or @result is NULL. */
char *ddp_report_transport_caveat(const DdpScenario *scenario, const DdpResult *result, const char *prefix);

/* "25 557 032"-style grouping for tables. */
char *ddp_report_group_digits(gint64 value);

#endif
