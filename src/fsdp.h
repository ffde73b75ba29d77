/* fsdp — one FullyShardedDataParallel iteration (FSDP1, torch.distributed.fsdp), as PyTorch's
 * runtime orders it: units from the auto-wrap policy (or the modules the model file wraps), one
 * flat parameter each, AllGathers before each unit's forward (rate-limited, optionally
 * prefetched) and again before its backward when resharded after forward, a ReduceScatter per
 * unit after its backward (HYBRID_SHARD: then an AllReduce across replicas), the sharded optimizer
 * step; with --accumulate, micro-steps inside or outside no_sync().  The rules and their PyTorch
 * sources are in docs/model.md "Strategies beyond DDP"; the scheduling is in fsdp.c. */
#ifndef DDP_FSDP_H
#define DDP_FSDP_H

#include <glib.h>
#include "ddp.h"

/* One FSDP unit: a wrapped module's flat parameter.  Unit 0 is the root (every parameter not in a
 * wrapped module); units 1.. are the wrapped modules in forward order. */
typedef struct {
  char *name;           /* the wrapped module's path ("model.layers.0"), "root" for the root */
  gint64 numel;         /* parameters in its flat parameter, unpadded */
  guint64 bytes;        /* as stored (the model's dtypes) */
} DdpFsdpUnit;

/* The units of @model: the modules its file wraps ([model] fsdp_units, model.h), or else the
 * default auto-wrap policy (docs/model.md): a block is a layer name's prefix up to its first
 * numeric component ("model.layers.0", "bert.encoder.layer.3", "layer1.0"), as
 * transformer_auto_wrap_policy wraps each transformer block; @blocks_per_unit consecutive blocks
 * make one unit (1 when the file names its units: the policy's granularity only); layers outside
 * every unit, and blocks without parameters, belong to the root.  @layer_unit (out, [n_layers]):
 * each layer's unit.  Returns: (transfer full) a GArray of DdpFsdpUnit with a clear function. */
GArray *ddp_fsdp_units(const DdpModel *model, guint blocks_per_unit, guint *layer_unit);

/* The schedule of one iteration, as pure data (fsdp.c "How time advances"): per layer times, each
 * layer's unit, the backward order, per unit collective times. */
typedef struct {
  guint n_layers, n_units;
  const gint64 *forward_ns, *backward_ns;   /* [n_layers], by layer */
  const guint *backward_order;              /* [n_layers] layer indices */
  const guint *layer_unit;                  /* [n_layers] */
  const gint64 *all_gather_ns;              /* [n_units] */
  const gint64 *reduce_ns;                  /* [n_units] ReduceScatter (AllReduce under NO_SHARD) */
  const gint64 *replica_ns;                 /* [n_units] HSDP's AllReduce across replicas, or NULL */
  const gint64 *grad_copy_ns;               /* [n_units] the flat gradient's assembly on the compute
                                             * stream after the unit's backward, or NULL (none) */
  const guint64 *all_gather_bytes, *reduce_bytes, *replica_bytes;  /* for the spans; may be NULL */
  gint64 optimizer_ns;
  guint micro_steps;                        /* --accumulate K: forward and backward K times, then the
                                             * step; 0 or 1: one */
  DdpFsdpAccumulate accumulate;             /* the first K-1 in no_sync(), or reduced every time */
  DdpSharding sharding;
  DdpBackwardPrefetch backward_prefetch;
  gboolean forward_prefetch, limit_all_gathers;
} DdpFsdpPlan;

/* Simulates @plan; returns the iteration's end (ns).  @spans (nullable): DdpCommSpans appended in
 * issue order; @segments (nullable): the compute stream's DdpSegments; @compute_end_ns
 * (nullable, out): when backward finished on the compute stream. */
gint64 ddp_fsdp_schedule(const DdpFsdpPlan *plan, GArray *spans, GArray *segments, gint64 *backward_end_ns);

/* ddp_simulate() for setup.mode fsdp.  Returns: (transfer full) or NULL with @error set. */
DdpResult *ddp_fsdp_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error);

/* The communicator of @scenario's sharding group — its AllGathers and ReduceScatters, or NO_SHARD's
 * AllReduce: *@gpus ranks on *@nodes servers.  FALSE with @error when the GPUs do not fit the
 * cluster. */
gboolean ddp_fsdp_group(const DdpScenario *scenario, guint64 *gpus, guint64 *nodes, GError **error);

#endif
