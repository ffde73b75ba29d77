/* bucket — PyTorch DDP's gradient bucket assignment, exactly (docs/model.md §1.1–1.3):
 * compute_bucket_assignment_by_size with per-(dtype) limit sequences, close-after-add overshoot,
 * sparse tensors alone; the construction-time layout and the one-time rebuild in gradient-ready
 * order before iteration 1. */
#ifndef DDP_BUCKET_H
#define DDP_BUCKET_H

#include <glib.h>
#include "model.h"

#define DDP_MIB ((guint64)1 << 20)
#define DDP_DEFAULT_FIRST_BUCKET_BYTES DDP_MIB          /* dist._DEFAULT_FIRST_BUCKET_BYTES */
#define DDP_DEFAULT_BUCKET_CAP_MB 25.0                  /* kDefaultBucketBytesCap = 25 MiB */
#define DDP_TORCH_VERSION_DEFAULT 204                   /* the rules of 2.4 and later (read in 2.11) */
/* distributed.py bucket_bytes_cap_default (pytorch/pytorch#121640, 2.4): a bucket_cap_mb passed to
 * DDP is also its first bucket, and DDP's limits under find_unused_parameters drop the 1 MiB one */
#define DDP_TORCH_VERSION_CAP_IS_FIRST 204

typedef struct {
  double bucket_cap_mb;             /* MiB; bytes = (guint64)(cap_mb * 1024 * 1024) as int() in distributed.py */
  gboolean bucket_cap_given;        /* bucket_cap_mb was passed to DDP (not the None default) */
  guint64 first_bucket_bytes;       /* 1 MiB */
  gboolean find_unused_parameters;  /* initial [first, cap] layout, never rebuilt */
  gboolean static_graph;
  guint torch_version;              /* 100·major + minor (113 = 1.13): the rules that changed between
                                     * releases (bucket.c "Versions"); DDP_TORCH_VERSION_DEFAULT: 2.x */
  gboolean cpu_device;              /* parameters on the CPU (gloo), not cuda:0: only the (dtype, device)
                                     * key hash changes, hence the order of leftover buckets */
  gboolean last_bucket_cap;         /* DDP_SET_LAST_BUCKET_CAP=1: the small bucket goes last */
} DdpBucketOptions;

/* Fills PyTorch's defaults: 25 MiB cap, 1 MiB first bucket, torch 2.4+ rules, everything else off. */
void ddp_bucket_options_init(DdpBucketOptions *options);
/* The first bucket's limit in the rebuilt layout: first_bucket_bytes, or from PyTorch 2.4 on the cap
 * when bucket_cap_mb was passed to DDP (DDP_TORCH_VERSION_CAP_IS_FIRST). */
guint64 ddp_bucket_options_first_bytes(const DdpBucketOptions *options);
/* A cap a search tries (tune, --knobs, solve --for bucket-cap): 25 MiB is PyTorch's default, the
 * argument not passed; any other value is passed to DDP (bucket_cap_given), which matters from 2.4. */
void ddp_bucket_options_try_cap(DdpBucketOptions *options, double cap_mb);

/* Parses "X.Y" (1.8 to 1.99, or 2.Y) into 100·X + Y.  FALSE (and *version untouched) otherwise. */
gboolean ddp_torch_version_parse(const char *text, guint *version);
gboolean ddp_bucket_options_rebuild(const DdpBucketOptions *options);

typedef struct {
  guint index;
  guint64 bytes;
  DdpDtype dtype;
  guint *params;     /* indices into model->params, in the order the bucket holds them */
  guint n_params;
} DdpBucket;

typedef struct _DdpBucketLayout DdpBucketLayout;

/* Construction-time layout (iteration 0), buckets in Reducer order (bucket 0 launches first). */
DdpBucketLayout *ddp_bucket_layout_initial(const DdpModel *model, const DdpBucketOptions *options);
/* Layout from iteration 1 on: the rebuilt one, or the initial one when PyTorch does not rebuild
 * (find_unused_parameters without static_graph). */
DdpBucketLayout *ddp_bucket_layout_steady(const DdpModel *model, const DdpBucketOptions *options);
void ddp_bucket_layout_free(DdpBucketLayout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpBucketLayout, ddp_bucket_layout_free)

guint ddp_bucket_layout_count(const DdpBucketLayout *layout);
const DdpBucket *ddp_bucket_layout_get(const DdpBucketLayout *layout, guint index);
/* Bucket holding model param @param. */
guint ddp_bucket_layout_bucket_of(const DdpBucketLayout *layout, guint param);
/* The libstdc++ bucket (of 13) of PyTorch's (dtype, device) map key: why leftover buckets come out
 * in reverse order of first appearance (bucket.c). */
guint ddp_bucket_map_slot(const DdpBucketOptions *options, DdpDtype dtype);
/* Asserts the invariants: every param in exactly one bucket, bytes = Σ param bytes, one dtype per bucket. */
gboolean ddp_bucket_layout_check(const DdpBucketLayout *layout, const DdpModel *model);

#endif
