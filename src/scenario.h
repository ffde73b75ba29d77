/* scenario — everything one prediction needs: model, cluster, training setup and stragglers,
 * from an optional scenario file with command-line flags overriding any key.
 * The common flags (the same names on every verb) are defined here once for every verb. */
#ifndef DDP_SCENARIO_H
#define DDP_SCENARIO_H

#include <glib.h>
#include "bucket.h"
#include "cluster.h"
#include "compute.h"
#include "fit.h"
#include "model.h"
#include "straggler.h"

typedef enum { DDP_HOOK_NONE, DDP_HOOK_FP16, DDP_HOOK_BF16, DDP_HOOK_COUNT } DdpCommHook;
/* DistributedDataParallel (one process per GPU) or torch.nn.DataParallel (one process, one node:
 * dp.h). */
typedef enum { DDP_MODE_DDP, DDP_MODE_DP, DDP_MODE_COUNT } DdpMode;

typedef struct {
  guint64 gpus;
  double batch;                     /* samples per GPU per micro-step */
  DdpPrecision precision;
  DdpBucketOptions buckets;
  guint accumulate;                 /* micro-steps per optimizer step; the first K-1 under no_sync */
  gboolean gradient_as_bucket_view;
  DdpCommHook comm_hook;
  DdpOptimizer optimizer;
  gboolean broadcast_buffers;
  guint iterations;                 /* steady-state iterations simulated after iteration 0 */
  guint64 seed;
  char *stragglers;                 /* the spec text */
  double step_ms;                   /* measured 1-GPU step to rescale compute to; 0: none */
  DdpMode mode;
  gboolean allow_oom;               /* predict: a model that does not fit is not an error (exit 3) */
  double unused_search_us;          /* find_unused_parameters' autograd-graph traversal per synced
                                     * iteration; < 0: derived from the model (ddp.c) */
} DdpSetup;

typedef struct {
  char *path;                       /* scenario file, or NULL */
  DdpModel *model;
  DdpCluster *cluster;
  DdpStragglers *stragglers;
  DdpSetup setup;
  DdpFit *calibration;              /* --calibration DB, or NULL: built-in specs and models */
} DdpScenario;

/* Raw command-line values (NULL/FALSE when not given); verbs embed this in their option struct. */
typedef struct {
  char *model, *cluster, *gpus, *bucket_cap_mb, *batch, *precision, *accumulate, *iterations;
  char *seed, *step_ms, *stragglers, *optimizer, *comm_hook, *calibration;
  char *mode, *torch_version, *unused_search_us;
  gboolean gradient_as_bucket_view, find_unused_parameters, static_graph, no_broadcast_buffers, allow_oom;
} DdpCliOptions;

#define DDP_SCENARIO_ERROR (ddp_scenario_error_quark())
GQuark ddp_scenario_error_quark(void);
typedef enum { DDP_SCENARIO_ERROR_INVALID } DdpScenarioError;

void ddp_setup_init(DdpSetup *setup);

/* The common option entries, storing into @cli (static array of GOptionEntry; NULL-terminated). */
GOptionEntry *ddp_cli_option_entries(DdpCliOptions *cli);
void ddp_cli_options_clear(DdpCliOptions *cli);

/* Loads @scenario_path (may be NULL: built-in defaults — resnet50 on dgx-a100, 8 GPUs), applies
 * @cli over it and validates.  When @gpus_from_cli is FALSE the --gpus flag is left to the verb
 * (scale takes a list).  Returns: (transfer full) or NULL with a one-line @error. */
DdpScenario *ddp_scenario_load(const char *scenario_path, const DdpCliOptions *cli,
                               gboolean gpus_from_cli, GError **error);
void ddp_scenario_free(DdpScenario *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpScenario, ddp_scenario_free)

const char *ddp_comm_hook_name(DdpCommHook hook);
const char *ddp_mode_name(DdpMode mode);

#endif
