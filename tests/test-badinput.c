/* Bad input through the real binary ($DDPSIM), one table (issue 11): every case must exit 2 with
 * exactly one line on stderr that names the file:line: group.key or the --flag, print nothing on
 * stdout, and leave every file as it was — inputs and would-be outputs alike (same names, sizes,
 * modification times and bytes; nothing created).  The table holds every crash, wrong answer and
 * wrong exit status the issue lists, then the ranges of docs/limits.md key by key and flag by
 * flag.  Each case runs in a fresh directory holding its files; the binary runs there. */
/* lstat, st_mtim, truncate, mkfifo under -std=c11 */
#define _DEFAULT_SOURCE

#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibdb.h"
#include "ranges.h"
#include "run-ddpsim.h"

#include <sqlite3.h>

/* Special files a case needs besides its text files. */
typedef enum {
  SETUP_NONE,
  SETUP_FIFO,          /* fifo: a named pipe */
  SETUP_DIR,           /* adir/: a directory */
  SETUP_BIG,           /* big.model: 65 MiB (sparse) */
  SETUP_MANY_LAYERS,   /* many.model: 100 001 layers */
  SETUP_DB_EMPTY,      /* empty.db: an existing empty file */
  SETUP_DB_DROPPED,    /* dropped.db: a ddpsim database with a table dropped */
  SETUP_DB_HUGE_POINT, /* point.db: an AllReduce point of 2^62 bytes */
  SETUP_DB_HUGE_ALPHA, /* alpha.db: a stored fit with alpha 1e308 */
  SETUP_OLD_OUTPUT,    /* out.png: an existing output that must survive */
  /* issue 20 */
  SETUP_DB_GOOD,       /* good.db: a sound database (one AllReduce point, no fit) */
  SETUP_DB_TRIGGER,    /* trig.db: good, plus a trigger that wipes the points on any new fit */
  SETUP_DB_VIEW,       /* view.db: good, plus a view */
  SETUP_DB_INDEX,      /* index.db: good, plus an index ddpsim did not create */
  SETUP_DB_CURVE_DUP,  /* curve.db: a stored fit whose curve lists one size twice */
  SETUP_DB_CURVE_ZERO, /* zero.db: a stored fit whose curve has a 0 µs time */
  SETUP_DB_OP_UNKNOWN, /* op.db: a stored fit with an AllGather curve point whose op was edited to "alltoall" */
  SETUP_DB_TEXT_ALPHA, /* text.db: a stored fit whose alpha_us was edited to the text 'x' (read as 0 before) */
  SETUP_GZIP_BOMB,     /* bomb.json.gz: 80 MiB of spaces as ~80 KB of gzip */
  SETUP_LINK,          /* link: a symbolic link to out.csv */
} Setup;

typedef struct {
  const char *name;
  const char *file;      /* written into the case directory, or NULL */
  const char *text;      /* its contents; with @length, may hold NUL bytes */
  gsize length;          /* 0: strlen(text) */
  const char *file2, *text2;
  Setup setup;
  const char *argv[14];
  const char *expect;    /* the one line must contain this */
} Case;

#define MODEL "[model]\nname = m\n\n[layer a]\nkind = linear\n"
/* line 6 forward_flops, 7 backward_flops, 8 params */
#define LAYER_A(fwd, bwd, params) MODEL "forward_flops = " fwd "\nbackward_flops = " bwd "\nparams = " params "\n"
#define GOOD_MODEL LAYER_A("1000", "2000", "a.w:10,10")
#define CLUSTER_HEAD "[cluster]\nname = c\ngpu = a100\n"
/* line 4 gpus_per_node, 6 [intra], 7 fabric, 8 bandwidth, 9 latency */
#define CLUSTER(ppn, bw, lat) CLUSTER_HEAD "gpus_per_node = " ppn "\n\n[intra]\nfabric = nvswitch\nbandwidth_GBs = " bw "\nlatency_us = " lat "\n"
#define GOOD_CLUSTER CLUSTER("8", "300", "1")
/* lines 11 [inter] 12 fabric 13 nics 14 Gbps 15 latency */
#define INTER(nics, gbps) "\n[inter]\nfabric = ib\nnics_per_node = " nics "\nnic_bandwidth_Gbps = " gbps "\nlatency_us = 5\n"
/* line 2 gpus, 5 the [training] key */
#define SCENARIO(gpus, training) "[scenario]\ngpus = " gpus "\n\n[training]\n" training "\n"
#define PREDICT "predict", "--model", "m.model"
/* line 3 fsdp_units; one layer a holding a.w */
#define UNITS_MODEL(units) "[model]\nname = m\nfsdp_units = " units "\n[layer a]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:10\n"
#define CSV_HEAD "cluster,gpus,bytes,time_us\n"
/* issue 20 */
#define TRACE_IMPORT "fit", "--db", "c.db", "--import", "t.json", "--model", "m.model", "--batch", "32"
#define NCCL_ROW "        1024           256     float     sum      -1    10.00    0.10    0.09      0    10.00    0.10    0.09      0\n"
#define LONG_NAME "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn.csv"

static const Case cases[] = {
  /* ---- issue 11, as listed ---- */
  { "groups-on-linear", "m.model", LAYER_A("1", "1", "a.w:16,16") "groups = 2\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: layer a.groups: 2 groups need kind = conv" },
  { "groups-not-dividing", "m.model", "[model]\nname = m\n\n[layer a]\nkind = conv\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:16,3,3,3\ngroups = 5\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: layer a.groups: 5 groups need" },
  { "seq-len-and-image-size", "m.model", "[model]\nname = m\nseq_len = 128\nimage_size = 224\n[layer a]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:10\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:4: model.image_size: a model takes tokens (seq_len) or images (image_size), not both" },
  { "shape-2^63", "m.model", LAYER_A("1", "1", "a.w:9223372036854775807"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params: a.w: bad shape" },
  { "shape-product-overflow", "m.model", LAYER_A("1", "1", "a.w:4294967296,4294967296"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params" },
  { "batch-1e308", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--batch", "1e308" }, "--batch:" },
  { "step-ms-1e308", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--step-ms", "1e308" }, "--step-ms:" },
  { "forward-flops-1e308", "m.model", LAYER_A("1e308", "1", "a.w:10"), 0, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops:" },
  { "bandwidth-1e22", "c.cluster", CLUSTER("8", "1e22", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:8: intra.bandwidth_GBs:" },
  { "bandwidth-1e-300", "c.cluster", CLUSTER("8", "1e-300", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:8: intra.bandwidth_GBs:" },
  { "stragglers-slow-1e300", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "slow:8:1e300" }, "--stragglers: \"slow:8:1e300\": FACTOR" },
  { "stragglers-lognormal-800", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "lognormal:800" }, "--stragglers: \"lognormal:800\": SIGMA" },
  { "allreduce-gpus-2^34", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "--gpus", "17179869184" }, "--gpus:" },
  { "allreduce-gpus-minus-8", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "--gpus", "-8" }, "--gpus: \"-8\"" },
  { "allreduce-gpus-2147483640", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "--gpus", "2147483640" }, "--gpus:" },
  { "allgather-sizes-all-too-small", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "--op", "all_gather", "-b", "8", "-e", "64" }, "-e: every size up to 64 B is below the smallest all_gather over 8 GPUs, 128 B" },
  { "compare-gpus-one", "c.csv", CSV_HEAD "dgx-a100,1,8,1\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2: gpus: an AllReduce to compare needs at least 2 GPUs" },
  { "compare-gpus-2^63", "c.csv", CSV_HEAD "dgx-a100,9223372036854775808,8,1\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "scale-list-to-2^31", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "2,3,...,2147483647" }, "--gpus:" },
  { "scale-list-4097-points", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "2,3,...,16777216" }, "--gpus: the list has more than 4096" },
  { "predict-gpus-2^31-stragglers", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "2147483640", "--stragglers", "normal:0.1" }, "--gpus:" },
  { "allreduce-rows-uncapped", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-b", "8", "-e", "8G", "-f", "2", "-i", "1" }, "-i: the sweep" },
  { "model-dev-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--model", "/dev/zero" }, "/dev/zero: not a regular file" },
  { "model-fifo", NULL, NULL, 0, NULL, NULL, SETUP_FIFO, { "predict", "--model", "./fifo" }, "./fifo: not a regular file" },
  { "scenario-fifo", NULL, NULL, 0, NULL, NULL, SETUP_FIFO, { "predict", "fifo" }, "fifo: not a regular file" },
  { "compare-fifo", NULL, NULL, 0, NULL, NULL, SETUP_FIFO, { "allreduce", "--compare", "fifo" }, "fifo: not a regular file" },
  { "model-100001-layers", NULL, NULL, 0, NULL, NULL, SETUP_MANY_LAYERS, { "predict", "--model", "./many.model" }, "many.model:" },
  { "scale-plot-nodir", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8", "--plot", "nodir/x.png" }, "--plot: \"nodir/x.png\"" },
  { "scale-plot-data-file", "afile", "keep me\n", 0, NULL, NULL, 0, { "scale", "--gpus", "8", "--plot", "x.png", "--plot-data", "afile" }, "--plot-data: \"afile\"" },
  { "tune-plot-data-file", "afile", "keep me\n", 0, NULL, NULL, 0, { "tune", "--plot", "x.svg", "--plot-data", "afile" }, "--plot-data: \"afile\"" },
  { "scale-plot-data-without-plot", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8", "--plot-data", "kept" }, "--plot-data: only with --plot" },
  { "tune-plot-data-without-plot", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--plot-data", "kept" }, "--plot-data: only with --plot" },
  { "scale-plot-data-missing-parent", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8", "--plot", "x.png", "--plot-data", "no/such" }, "--plot-data: \"no/such\": the directory \"no\" it would go in does not exist" },
  { "timeline-plot-data-file", "afile", "keep me\n", 0, NULL, NULL, 0, { "timeline", "-o", "x.png", "--plot-data", "afile" }, "--plot-data: \"afile\"" },
  { "calibration-dropped-table", NULL, NULL, 0, NULL, NULL, SETUP_DB_DROPPED, { "predict", "--calibration", "dropped.db" }, "dropped.db: damaged database" },
  { "fit-existing-empty-file", NULL, NULL, 0, NULL, NULL, SETUP_DB_EMPTY, { "fit", "--db", "empty.db" }, "empty.db: an existing empty file" },
  { "calibration-point-2^62-bytes", NULL, NULL, 0, NULL, NULL, SETUP_DB_HUGE_POINT, { "predict", "--calibration", "point.db" }, "point.db: allreduce_points, row 1: bytes" },
  { "calibration-alpha-1e308", NULL, NULL, 0, NULL, NULL, SETUP_DB_HUGE_ALPHA, { "predict", "--calibration", "alpha.db" }, "alpha_us = 1e+308" },
  { "keyfile-nul-byte", "m.model", GOOD_MODEL "\0[layer b]\nkind = conv\n", sizeof(GOOD_MODEL "\0[layer b]\nkind = conv\n") - 1, NULL, NULL, 0, { PREDICT }, "m.model:9: a NUL byte" },
  { "keyfile-control-chars", "m.model", LAYER_A("1\x01\x02\x1b[2J", "1", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops: \"1\\x01\\x02\\x1b[2J\"" },
  { "keyfile-glib-locale-key", "m.model", GOOD_MODEL "name[x = y\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9:" },
  { "batch-0.5", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--batch", "0.5" }, "--batch: \"0.5\"" },
  { "stragglers-slow-100-on-8", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "8", "--stragglers", "slow:100:2" }, "--stragglers: slow:100" },
  { "existing-output-survives", NULL, NULL, 0, NULL, NULL, SETUP_OLD_OUTPUT, { "scale", "--gpus", "8", "--batch", "0", "--plot", "out.png" }, "--batch:" },
  /* ---- model files ---- */
  { "flops-negative", "m.model", LAYER_A("-1", "1", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops:" },
  { "flops-nan", "m.model", LAYER_A("nan", "1", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops:" },
  { "flops-inf", "m.model", LAYER_A("inf", "1", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops:" },
  { "flops-underflow", "m.model", LAYER_A("1e-400", "1", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops:" },
  { "flops-over-1e18", "m.model", LAYER_A("1", "2e18", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:7: layer a.backward_flops:" },
  { "flops-text", "m.model", LAYER_A("1", "abc", "a.w:1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:7: layer a.backward_flops:" },
  { "shape-negative", "m.model", LAYER_A("1", "1", "a.w:-8"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params: a.w: bad shape" },
  { "shape-zero", "m.model", LAYER_A("1", "1", "a.w:0"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params" },
  { "shape-9-dims", "m.model", LAYER_A("1", "1", "a.w:1,1,1,1,1,1,1,1,1"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params" },
  { "shape-2^48-elements", "m.model", LAYER_A("1", "1", "a.w:16777216,16777216"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params" },
  { "model-over-2^50-bytes", "m.model", LAYER_A("1", "1", "a.w:140737488355328:fp64;a.v:140737488355328:fp64"), 0, NULL, NULL, 0, { PREDICT }, "m.model:1: [model]: the parameters total more than 2^50" },
  { "param-dtype", "m.model", LAYER_A("1", "1", "a.w:10:fp99"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params: a.w: \"fp99\"" },
  { "param-no-shape", "m.model", LAYER_A("1", "1", "a.w"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params" },
  { "param-twice", "m.model", LAYER_A("1", "1", "a.w:1;a.w:2"), 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.params: parameter a.w is listed twice" },
  { "forward-us-over", "m.model", "[model]\nname = m\nmeasured_batch = 8\n[layer a]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\nforward_us = 1e10\nparams = a.w:1\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:8: layer a.forward_us:" },
  { "forward-us-no-batch", "m.model", LAYER_A("1", "1", "a.w:1") "forward_us = 5\n", 0, NULL, NULL, 0, { PREDICT }, "model.measured_batch" },
  { "measured-batch-fraction", "m.model", "[model]\nname = m\nmeasured_batch = 0.5\n[layer a]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:1\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:3: model.measured_batch:" },
  { "buffer-bytes-2^63", "m.model", "[model]\nname = m\nbuffer_bytes = 9223372036854775807\n[layer a]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:1\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:3: model.buffer_bytes:" },
  { "buffer-bytes-negative", "m.model", "[model]\nname = m\nbuffer_bytes = -1\n[layer a]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:1\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:3: model.buffer_bytes:" },
  { "layer-unknown-key", "m.model", GOOD_MODEL "flops = 3\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: layer a.flops: unknown key" },
  { "unknown-group", "m.model", GOOD_MODEL "[lyr x]\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: [lyr x]: unknown group" },
  { "key-twice", "m.model", GOOD_MODEL "forward_flops = 3\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: layer a.forward_flops: key given twice" },
  { "group-twice", "m.model", GOOD_MODEL "[layer a]\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: [layer a]: group given twice" },
  { "header-unclosed", "m.model", GOOD_MODEL "[layer b\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: malformed group header" },
  { "bare-text", "m.model", GOOD_MODEL "just words\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:9: expected \"key = value\"" },
  { "key-before-group", "m.model", "x = 1\n" GOOD_MODEL, 0, NULL, NULL, 0, { PREDICT }, "m.model:1: key outside any [group]" },
  { "empty-model", "m.model", "", 0, NULL, NULL, 0, { PREDICT }, "m.model: [model]: required group is missing" },
  { "no-layers", "m.model", "[model]\nname = m\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:1: [model]: the model has no" },
  { "invalid-utf8", "m.model", "[model]\nname = \xff\xfe\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:2: not valid UTF-8" },
  { "model-directory", NULL, NULL, 0, NULL, NULL, SETUP_DIR, { "predict", "--model", "./adir" }, "./adir: not a regular file" },
  { "model-65MiB", NULL, NULL, 0, NULL, NULL, SETUP_BIG, { "predict", "--model", "./big.model" }, "./big.model: 68157440 bytes; input files are limited to 64 MiB" },
  { "model-missing", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--model", "./nothing.model" }, "./nothing.model: cannot open" },
  { "name-escaped-newline", "c.cluster", "[cluster]\nname = a\\nb\ngpu = a100\ngpus_per_node = 1\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster", "--gpus", "1" }, "c.cluster:2: cluster.name: \"a\\nb\": control characters" },
  { "stragglers-newline-kind", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "s\now:100:2" }, "--stragglers: \"s\\now:100:2\": unknown kind \"s\\now\"" },
  { "kind-unknown", "m.model", "[model]\nname = m\n[layer a]\nkind = lstm\nforward_flops = 1\nbackward_flops = 1\nparams = a.w:1\n", 0, NULL, NULL, 0, { PREDICT }, "m.model:4: layer a.kind:" },
  /* ---- cluster files ---- */
  { "bandwidth-zero", "c.cluster", CLUSTER("8", "0", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:8: intra.bandwidth_GBs:" },
  { "bandwidth-over-1e5", "c.cluster", CLUSTER("8", "100001", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:8: intra.bandwidth_GBs:" },
  { "latency-negative", "c.cluster", CLUSTER("8", "300", "-1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:9: intra.latency_us:" },
  { "latency-1e9", "c.cluster", CLUSTER("8", "300", "1e9"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:9: intra.latency_us:" },
  { "gpus-per-node-0", "c.cluster", CLUSTER("0", "300", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:4: cluster.gpus_per_node:" },
  { "gpus-per-node-4096", "c.cluster", CLUSTER("4096", "300", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:4: cluster.gpus_per_node:" },
  { "gpus-per-node-fraction", "c.cluster", CLUSTER("8.5", "300", "1"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:4: cluster.gpus_per_node:" },
  { "gpu-unknown", "c.cluster", "[cluster]\nname = c\ngpu = z9000\ngpus_per_node = 1\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster", "--gpus", "1" }, "c.cluster:3: cluster.gpu:" },
  { "max-nodes-negative", "c.cluster", CLUSTER_HEAD "gpus_per_node = 8\nmax_nodes = -1\n[intra]\nfabric = nvswitch\nbandwidth_GBs = 300\nlatency_us = 1\n" INTER("1", "100"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:5: cluster.max_nodes:" },
  { "max-nodes-huge", "c.cluster", CLUSTER_HEAD "gpus_per_node = 8\nmax_nodes = 99999999999\n[intra]\nfabric = nvswitch\nbandwidth_GBs = 300\nlatency_us = 1\n" INTER("1", "100"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:5: cluster.max_nodes:" },
  { "tflops-1e308", "c.cluster", GOOD_CLUSTER "[gpu]\nfp32_tflops = 1e308\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: gpu.fp32_tflops:" },
  { "hbm-zero", "c.cluster", GOOD_CLUSTER "[gpu]\nhbm_GBs = 0\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: gpu.hbm_GBs:" },
  { "sms-zero", "c.cluster", GOOD_CLUSTER "[gpu]\nsms = 0\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: gpu.sms:" },
  { "memory-huge", "c.cluster", GOOD_CLUSTER "[gpu]\nmemory_GB = 1e30\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: gpu.memory_GB:" },
  { "nic-gbps-1e22", "c.cluster", GOOD_CLUSTER INTER("1", "1e22"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:14: inter.nic_bandwidth_Gbps:" },
  { "nic-gbps-below-0.01", "c.cluster", GOOD_CLUSTER INTER("1", "0.001"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:14: inter.nic_bandwidth_Gbps:" },
  { "nics-zero", "c.cluster", GOOD_CLUSTER INTER("0", "100"), 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:13: inter.nics_per_node:" },
  { "oversubscription-half", "c.cluster", GOOD_CLUSTER INTER("1", "100") "oversubscription = 0.5\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:16: inter.oversubscription:" },
  { "rail-maybe", "c.cluster", GOOD_CLUSTER INTER("1", "100") "rail_optimized = maybe\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:16: inter.rail_optimized:" },
  { "channels-65", "c.cluster", GOOD_CLUSTER "[nccl]\nchannels = 65\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: nccl.channels:" },
  { "nccl-bw-1e-300", "c.cluster", GOOD_CLUSTER "[nccl]\nbw_intra_GBs = 1e-300\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: nccl.bw_intra_GBs:" },
  { "launch-us-1e300", "c.cluster", GOOD_CLUSTER "[nccl]\nlaunch_us = 1e300\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: nccl.launch_us:" },
  { "algorithm-unknown", "c.cluster", GOOD_CLUSTER "[nccl]\nalgorithm = fast\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:11: nccl.algorithm:" },
  { "overlap-slowdown-11", "c.cluster", CLUSTER_HEAD "gpus_per_node = 1\noverlap_slowdown = 11\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster", "--gpus", "1" }, "c.cluster:5: cluster.overlap_slowdown:" },
  { "fabric-unknown", "c.cluster", CLUSTER_HEAD "gpus_per_node = 8\n[intra]\nfabric = pigeon\nbandwidth_GBs = 3\nlatency_us = 1\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:6: intra.fabric:" },
  { "intra-missing", "c.cluster", CLUSTER_HEAD "gpus_per_node = 8\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster: [intra]: required group is missing" },
  { "two-nodes-no-inter", "c.cluster", GOOD_CLUSTER, 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster", "--gpus", "16" }, "--gpus: 16 GPUs need 2 nodes" },
  { "cluster-unknown-group", "c.cluster", GOOD_CLUSTER "[extra]\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:10: [extra]: unknown group" },
  /* ---- scenario files ---- */
  { "scenario-gpus-2^34", "s.scenario", SCENARIO("17179869184", "batch = 8"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:2: scenario.gpus:" },
  { "scenario-gpus-minus-8", "s.scenario", SCENARIO("-8", "batch = 8"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:2: scenario.gpus:" },
  { "scenario-gpus-zero", "s.scenario", SCENARIO("0", "batch = 8"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:2: scenario.gpus:" },
  { "scenario-batch-0.5", "s.scenario", SCENARIO("8", "batch = 0.5"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.batch:" },
  { "scenario-batch-1e308", "s.scenario", SCENARIO("8", "batch = 1e308"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.batch:" },
  { "scenario-batch-zero", "s.scenario", SCENARIO("8", "batch = 0"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.batch:" },
  { "scenario-cap-zero", "s.scenario", SCENARIO("8", "bucket_cap_mb = 0"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.bucket_cap_mb:" },
  { "scenario-cap-1e300", "s.scenario", SCENARIO("8", "bucket_cap_mb = 1e300"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.bucket_cap_mb:" },
  { "scenario-accumulate-zero", "s.scenario", SCENARIO("8", "accumulate = 0"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.accumulate:" },
  { "scenario-accumulate-2^21", "s.scenario", SCENARIO("8", "accumulate = 2097152"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.accumulate:" },
  { "scenario-iterations-zero", "s.scenario", SCENARIO("8", "iterations = 0"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.iterations:" },
  { "scenario-iterations-1e7", "s.scenario", SCENARIO("8", "iterations = 10000000"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.iterations:" },
  { "scenario-step-ms-1e308", "s.scenario", SCENARIO("8", "step_ms = 1e308"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.step_ms:" },
  { "scenario-step-ms-zero", "s.scenario", SCENARIO("8", "step_ms = 0"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.step_ms:" },
  { "scenario-lognormal-800", "s.scenario", SCENARIO("8", "stragglers = lognormal:800"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.stragglers:" },
  { "scenario-slow-1e300", "s.scenario", SCENARIO("8", "stragglers = slow:8:1e300"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.stragglers:" },
  { "scenario-slow-100-on-8", "s.scenario", SCENARIO("8", "stragglers = slow:100:2"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.stragglers: slow:100" },
  { "scenario-seed-negative", "s.scenario", SCENARIO("8", "seed = -1"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.seed:" },
  { "scenario-precision", "s.scenario", SCENARIO("8", "precision = fp8"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.precision:" },
  { "scenario-hook", "s.scenario", SCENARIO("8", "comm_hook = int8"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.comm_hook:" },
  { "scenario-bool", "s.scenario", SCENARIO("8", "static_graph = sometimes"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.static_graph:" },
  { "scenario-unknown-group", "s.scenario", SCENARIO("8", "batch = 8") "[tuning]\n", 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:6: [tuning]: unknown group" },
  { "scenario-cluster-twice", "s.scenario", "[scenario]\ncluster = dgx-a100\n" GOOD_CLUSTER, 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:2: scenario.cluster:" },
  { "scenario-inline-bad-bandwidth", "s.scenario", "[scenario]\ngpus = 8\n" CLUSTER("8", "1e22", "1"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:10: intra.bandwidth_GBs:" },
  { "scenario-model-bad", "s.scenario", "[scenario]\nmodel = m.model\n", 0, "m.model", LAYER_A("1e308", "1", "a.w:1"), 0, { "predict", "s.scenario" }, "m.model:6: layer a.forward_flops:" },
  { "scenario-is-directory", NULL, NULL, 0, NULL, NULL, SETUP_DIR, { "predict", "adir" }, "adir: not a regular file" },
  /* ---- flags ---- */
  { "gpus-2^34", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "17179869184" }, "--gpus:" },
  { "gpus-minus-8", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "-8" }, "--gpus: \"-8\"" },
  { "gpus-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "0" }, "--gpus: \"0\"" },
  { "gpus-space", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "8 8" }, "--gpus:" },
  { "gpus-invalid-utf8", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "\xff" }, "--gpus: the argument is not valid UTF-8" },
  { "gpus-control-chars", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--gpus", "8\x01\x1b[31m" }, "--gpus: \"8\\x01\\x1b[31m\"" },
  { "batch-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--batch", "0" }, "--batch: \"0\"" },
  { "batch-nan", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--batch", "nan" }, "--batch: \"nan\"" },
  { "batch-2^25", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--batch", "33554432" }, "--batch:" },
  { "step-ms-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--step-ms", "0" }, "--step-ms:" },
  { "step-ms-inf", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--step-ms", "inf" }, "--step-ms:" },
  { "cap-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--bucket-cap-mb", "0" }, "--bucket-cap-mb:" },
  { "cap-nan", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--bucket-cap-mb", "nan" }, "--bucket-cap-mb:" },
  { "accumulate-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--accumulate", "0" }, "--accumulate:" },
  { "accumulate-fraction", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--accumulate", "1.5" }, "--accumulate:" },
  { "iterations-1e6-text", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--iterations", "1e6" }, "--iterations:" },
  { "iterations-over", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--iterations", "1000001" }, "--iterations:" },
  { "seed-negative", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--seed", "-1" }, "--seed:" },
  { "precision-fp8", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--precision", "fp8" }, "--precision:" },
  { "optimizer-lion", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--optimizer", "lion" }, "--optimizer:" },
  { "stragglers-normal-11", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "normal:11" }, "--stragglers: \"normal:11\"" },
  { "stragglers-slow-k-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "slow:0:2" }, "--stragglers: \"slow:0:2\"" },
  { "stragglers-hiccup-2e9", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "hiccup:10:2e9" }, "--stragglers: \"hiccup:10:2e9\"" },
  { "stragglers-17-terms", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1,normal:0.1" }, "more than 16 terms" },
  { "stragglers-unknown", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "gamma:2" }, "--stragglers: \"gamma:2\"" },
  { "extra-argument", NULL, NULL, 0, NULL, NULL, 0, { "predict", "a.scenario", "b.scenario" }, "unexpected argument \"b.scenario\"" },
  { "unknown-flag", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--turbo" }, "--turbo" },
  { "unknown-verb", NULL, NULL, 0, NULL, NULL, 0, { "simulate" }, "unknown verb \"simulate\"" },
  { "time-overflow", "m.model", LAYER_A("1e18", "1e18", "a.w:1"), 0, "c.cluster", CLUSTER_HEAD "gpus_per_node = 1\n[gpu]\nfp32_tflops = 0.001\n", 0, { PREDICT, "--cluster", "c.cluster", "--gpus", "1", "--batch", "16777216" }, "past the simulator's clock" },
  { "allreduce-b-zero", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-b", "0" }, "-b: \"0\"" },
  { "allreduce-e-over-2^50", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-e", "2097152G" }, "-e: \"2097152G\"" },
  { "allreduce-f-one", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-f", "1" }, "-f: \"1\"" },
  { "allreduce-f-huge", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-f", "4G" }, "-f: \"4G\"" },
  { "allreduce-b-over-e", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-b", "1G", "-e", "1M" }, "-b:" },
  { "allreduce-type", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-d", "int7" }, "-d: unknown type" },
  { "allreduce-algo", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "--algo", "fast" }, "--algo:" },
  { "compare-gpus-negative", "c.csv", CSV_HEAD "dgx-a100,-8,8,1\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "compare-gpus-2^25", "c.csv", CSV_HEAD "dgx-a100,33554432,8,1\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "compare-bytes-2^63", "c.csv", CSV_HEAD "dgx-a100,8,9223372036854775807,1\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "compare-time-nan", "c.csv", CSV_HEAD "dgx-a100,8,8,nan\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "compare-time-hex", "c.csv", CSV_HEAD "dgx-a100,8,8,0x10\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "compare-gpus-hex", "c.csv", CSV_HEAD "dgx-a100,0x8,8,1\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2:" },
  { "compare-nul-byte", "c.csv", CSV_HEAD "dgx-a100,8,8,1\0\n", sizeof(CSV_HEAD "dgx-a100,8,8,1\0\n") - 1, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2: a NUL byte" },
  { "compare-fields", "c.csv", CSV_HEAD "dgx-a100,8\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:2: expected 4 fields" },
  { "compare-no-column", "c.csv", "cluster,gpus\n", 0, NULL, NULL, 0, { "allreduce", "--compare", "c.csv" }, "c.csv:1: no \"bytes\" column" },
  { "scale-decreasing", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "16,8" }, "--gpus: counts must increase" },
  { "scale-ellipsis-first", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "...,8" }, "--gpus:" },
  { "scale-unicode-ellipsis-bad", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8,16,…,4" }, "--gpus:" },
  { "scale-global-batch-0.5", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8", "--global-batch", "0.5" }, "--global-batch: \"0.5\"" },
  { "scale-slow-k-over-list", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8,16", "--stragglers", "slow:32:2" }, "--stragglers: slow:32" },
  { "scale-plot-format", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--gpus", "8", "--plot", "x.jpg" }, "--plot:" },
  { "tune-range-zero", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--range", "0:1" }, "--range MIN: \"0\" must be a number from 1e-06 to 1e+09" },
  { "tune-range-tiny", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--range", "1e-300:1" }, "--range MIN: \"1e-300\"" },
  { "tune-points-zero", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--points", "0" }, "--points:" },
  { "timeline-ranks-zero", NULL, NULL, 0, NULL, NULL, 0, { "timeline", "--trace", "t.json", "--ranks", "0" }, "--ranks:" },
  /* ---- command flags, checked against ranges.h like the rest: just outside each bound ---- */
  { "allreduce-g-zero", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-g", "0" }, "-g: \"0\" must be a whole number from 1 to 1024" },
  { "allreduce-g-1025", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-g", "1025" }, "-g: \"1025\" must be a whole number from 1 to 1024" },
  { "allreduce-g-hex", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-g", "0x2" }, "-g: \"0x2\"" },
  { "allreduce-b-hex", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-b", "0x10" }, "-b: \"0x10\" must be a whole number from 1 to 1125899906842624 (suffixes K, M, G)" },
  { "allreduce-b-over-2^50", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-b", "1125899906842625" }, "-b: \"1125899906842625\"" },
  { "allreduce-e-zero", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-e", "0" }, "-e: \"0\"" },
  { "allreduce-e-trailing-junk", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-e", "128MB" }, "-e: \"128MB\"" },
  { "allreduce-i-zero", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-i", "0" }, "-i: \"0\" must be a whole number from 1" },
  { "allreduce-i-over-2^50", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-i", "1048577G" }, "-i: \"1048577G\"" },
  { "allreduce-f-2^20-plus-1", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-f", "1048577" }, "-f: \"1048577\" must be a whole number from 2 to 1048576" },
  { "allreduce-f-nan", NULL, NULL, 0, NULL, NULL, 0, { "allreduce", "-f", "nan" }, "-f: \"nan\"" },
  { "scale-max-batch-zero", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--global-batch", "64", "--max-batch", "0" }, "--max-batch: \"0\" must be a whole number from 1 to 16777216" },
  { "scale-max-batch-2^24-plus-1", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--global-batch", "64", "--max-batch", "16777217" }, "--max-batch: \"16777217\"" },
  { "scale-max-batch-weak", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--max-batch", "8" }, "--max-batch: \"8\" applies to strong scaling only" },
  { "solve-target-zero", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0" }, "--target-efficiency: \"0\" must be a number above 0 and at most 1" },
  { "solve-target-over-100%", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "100.1%" }, "--target-efficiency: \"100.1%\"" },
  { "solve-target-inf", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "inf" }, "--target-efficiency: \"inf\"" },
  { "solve-min-gpus-zero", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--min", "0" }, "--min: \"0\" must be a whole number from 1 to 16777216" },
  { "solve-max-gpus-2^24-plus-1", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--max", "16777217" }, "--max: \"16777217\" must be a whole number from 1 to 16777216" },
  { "solve-min-bandwidth-below", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "inter-bandwidth", "--target-efficiency", "0.9", "--min", "0.009" }, "--min: \"0.009\" must be a number from 0.01 to 800000" },
  { "solve-max-bandwidth-over", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "inter-bandwidth", "--target-efficiency", "0.9", "--max", "800001" }, "--max: \"800001\"" },
  { "solve-min-hex", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--min", "0x8" }, "--min: \"0x8\"" },
  { "solve-tolerance-zero", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--tolerance", "0" }, "--tolerance: \"0\" must be a number at least 1e-09 and below 1" },
  /* below a double's resolution the bisection never ended (a hang, not an error) */
  { "solve-tolerance-1e-16", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "inter-bandwidth", "--target-efficiency", "0.9", "--gpus", "64", "--tolerance", "1e-16" }, "--tolerance: \"1e-16\"" },
  { "solve-tolerance-one", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--tolerance", "1" }, "--tolerance: \"1\"" },
  { "solve-min-gain-negative", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "bucket-cap", "--min-gain", "-0.01" }, "--min-gain: \"-0.01\" must be a number from 0 to 1" },
  { "solve-min-gain-over", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "bucket-cap", "--min-gain", "1.01" }, "--min-gain: \"1.01\"" },
  { "solve-global-batch-zero", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--global-batch", "0" }, "--global-batch: \"0\" must be a whole number from 1 to 1099511627776" },
  { "solve-global-batch-2^40-plus-1", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--global-batch", "1099511627777" }, "--global-batch: \"1099511627777\"" },
  { "solve-max-batch-zero", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--global-batch", "64", "--max-batch", "0" }, "--max-batch: \"0\" must be a whole number from 1 to 16777216" },
  { "solve-max-batch-2^24-plus-1", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--target-efficiency", "0.9", "--global-batch", "64", "--max-batch", "16777217" }, "--max-batch: \"16777217\"" },
  { "tune-min-gain-negative", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--min-gain", "-0.01" }, "--min-gain: \"-0.01\" must be a number from 0 to 1" },
  { "tune-min-gain-over", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--min-gain", "101%" }, "--min-gain: \"101%\"" },
  { "tune-min-gain-empty", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--min-gain", "" }, "--min-gain: \"\"" },
  { "tune-first-bucket-zero", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--first-bucket-mb", "0" }, "--first-bucket-mb: \"0\" must be a number from 1e-06 to 1e+09" },
  { "tune-first-bucket-over", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--first-bucket-mb", "4,1.1e9" }, "--first-bucket-mb: \"1.1e9\"" },
  { "tune-range-over", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--range", "1:2e9" }, "--range MAX: \"2e9\" must be a number from 1e-06 to 1e+09" },
  { "tune-range-hex", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--range", "0x1:16" }, "--range MIN: \"0x1\"" },
  { "tune-range-reversed", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--range", "8:4" }, "--range: \"8:4\": MIN is above MAX" },
  { "tune-points-10001", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--points", "10001" }, "--points: \"10001\" must be a whole number from 1 to 10000" },
  { "timeline-ranks-17", NULL, NULL, 0, NULL, NULL, 0, { "timeline", "--trace", "t.json", "--ranks", "17" }, "--ranks: \"17\" must be a whole number from 1 to 16" },
  { "sweep-jobs-1025", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--jobs", "1025" }, "--jobs: \"1025\" must be a whole number from 0 to 1024" },
  { "sweep-jobs-negative", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--jobs", "-1" }, "--jobs: \"-1\"" },
  { "sweep-gpus-zero", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--gpus", "8,0" }, "--gpus: \"0\" must be a whole number from 1 to 16777216" },
  { "sweep-gpus-2^24-plus-1", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--gpus", "16777217" }, "--gpus: \"16777217\"" },
  { "sweep-gpus-after-ellipsis", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--gpus", "8,16,...,16777217" }, "--gpus: \"16777217\"" },
  { "sweep-cap-zero", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--bucket-cap-mb", "25,0" }, "--bucket-cap-mb: \"0\" must be a number from 1e-06 to 1e+09" },
  { "sweep-cap-over", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--bucket-cap-mb", "1.1e9" }, "--bucket-cap-mb: \"1.1e9\"" },
  { "sweep-cap-hex", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--bucket-cap-mb", "0x10" }, "--bucket-cap-mb: \"0x10\"" },
  { "sweep-seed-negative", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--seed", "1,-1" }, "--seed: \"-1\" must be a whole number from 0 to 18446744073709551615" },
  { "sweep-seed-2^64", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--seed", "18446744073709551616" }, "--seed: \"18446744073709551616\"" },
  { "sweep-grid-gpus-zero", "g.ini", "[sweep]\ngpus = 8,0\n", 0, NULL, NULL, 0, { "sweep", "--grid", "g.ini" }, "g.ini:2: sweep.gpus: \"0\" must be a whole number from 1 to 16777216" },
  { "sweep-grid-cap-inf", "g.ini", "[sweep]\nbucket_cap_mb = inf\n", 0, NULL, NULL, 0, { "sweep", "--grid", "g.ini" }, "g.ini:2: sweep.bucket_cap_mb: \"inf\"" },
  { "cap-hex", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--bucket-cap-mb", "0x10" }, "--bucket-cap-mb: \"0x10\" must be a number from 1e-06 to 1e+09" },
  { "step-ms-hex-float", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--step-ms", "0x1p3" }, "--step-ms: \"0x1p3\"" },
  { "step-ms-empty", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--step-ms", "" }, "--step-ms: \"\"" },
  { "seed-hex", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--seed", "0x1" }, "--seed: \"0x1\" must be a whole number from 0 to 18446744073709551615" },
  { "timeline-output-nodir", NULL, NULL, 0, NULL, NULL, 0, { "timeline", "--trace", "nodir/t.json" }, "--trace:" },
  { "timeline-dp-chart", NULL, NULL, 0, NULL, NULL, 0, { "timeline", "--mode", "dp", "--gpus", "8", "-o", "x.png" }, "-o: the chart draws DDP" },
  { "calibration-empty-file", NULL, NULL, 0, NULL, NULL, SETUP_DB_EMPTY, { "predict", "--calibration", "empty.db" }, "empty.db: empty file" },
  { "calibration-text-file", "t.db", "not a database at all, but long enough for SQLite to read a full header ......\n", 0, NULL, NULL, 0, { "predict", "--calibration", "t.db" }, "t.db:" },
  { "fit-text-file", "t.db", "not a database at all, but long enough for SQLite to read a full header ......\n", 0, NULL, NULL, 0, { "fit", "--db", "t.db" }, "t.db:" },
  { "calibration-malformed-schema", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--calibration", DDP_SRCDIR "/tests/fuzz/corpus/calibdb/regress-malformed-schema-newline.db" }, "malformed database schema (fit\\x01\\x02" },
  { "calibration-directory", NULL, NULL, 0, NULL, NULL, SETUP_DIR, { "predict", "--calibration", "adir" }, "adir: a directory, not a calibration database file" },
  /* issue 21: "did you mean" for what a new user mistypes, and the cost flags */
  { "model-did-you-mean", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--model", "resnet-50" }, "--model: no model file or shipped model named \"resnet-50\" (did you mean \"resnet50\"?)" },
  { "cluster-did-you-mean", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--cluster", "dgx-a10" }, "(did you mean \"dgx-a100\"?)" },
  { "verb-did-you-mean", NULL, NULL, 0, NULL, NULL, 0, { "predcit" }, "unknown verb \"predcit\" (did you mean \"predict\"?)" },
  { "stragglers-colon", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--stragglers", "lognormal0.05" }, "--stragglers: \"lognormal0.05\": unknown kind \"lognormal0.05\" (did you mean \"lognormal:0.05\"?)" },
  { "cap-with-unit", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--bucket-cap-mb", "25MB" }, "--bucket-cap-mb: \"25MB\" must be a number from 1e-06 to 1e+09 (did you mean 25?" },
  { "scenario-is-model-name", NULL, NULL, 0, NULL, NULL, 0, { "predict", "resnet50" }, "resnet50: no such scenario file; \"resnet50\" is a shipped model name: did you mean --model resnet50?" },
  { "precision-did-you-mean", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--precision", "bf61" }, "--precision: \"bf61\" is not one of fp32|tf32|fp16|bf16 (did you mean \"bf16\"?)" },
  { "solve-for-did-you-mean", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpu", "--target-efficiency", "0.9" }, "(did you mean \"gpus\"?)" },
  { "key-choice-did-you-mean", "s.scenario", SCENARIO("8", "optimizer = adamm"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.optimizer: \"adamm\" is not one of sgd|sgd-momentum|adam|adamw (did you mean \"adam\"?)" },
  { "knobs-did-you-mean", NULL, NULL, 0, NULL, NULL, 0, { "tune", "--knobs", "bucket-cap,comm_hook" }, "--knobs: \"comm_hook\" is not a knob (did you mean \"comm-hook\"?)" },
  { "price-zero", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--price-per-gpu-hour", "0" }, "--price-per-gpu-hour: \"0\" must be a number above 0" },
  { "train-samples-zero", NULL, NULL, 0, NULL, NULL, 0, { "scale", "--train-samples", "0" }, "--train-samples: \"0\" must be a number from 1" },
  { "train-tokens-not-sequence", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--model", "resnet50", "--train-tokens", "1e9" }, "--train-tokens: model resnet50 has no sequence length" },
  { "cluster-price-negative", "c.cluster", CLUSTER_HEAD "price_per_gpu_hour = -2\ngpus_per_node = 8\n\n[intra]\nfabric = nvswitch\nbandwidth_GBs = 300\nlatency_us = 1\n", 0, NULL, NULL, 0, { "predict", "--cluster", "c.cluster" }, "c.cluster:4: cluster.price_per_gpu_hour: \"-2\"" },
  { "deadline-not-gpus", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "batch", "--deadline-hours", "2", "--train-samples", "1e6" }, "--deadline-hours: applies to --for gpus only" },
  { "deadline-no-length", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--deadline-hours", "2" }, "--deadline-hours: needs the training length" },
  { "deadline-zero", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--deadline-hours", "0", "--train-samples", "1e6" }, "--deadline-hours: \"0\" must be a number above 0" },
  { "budget-with-target", NULL, NULL, 0, NULL, NULL, 0, { "solve", "--for", "gpus", "--budget", "10", "--target-efficiency", "0.9", "--train-samples", "1e6" }, "--budget: answers instead of --target-efficiency" },
  { "allreduce-calibration-alpha", NULL, NULL, 0, NULL, NULL, SETUP_DB_HUGE_ALPHA, { "allreduce", "--calibration", "alpha.db" }, "alpha_us = 1e+308" },

  /* ---- issue 20: importers (fit --import), by class ---- */
  /* types: json-glib gave NULL for a number where a string was read, and strcmp crashed */
  { "import-trace-ph-number", "t.json", "{\"traceEvents\":[{\"ph\":1,\"name\":\"x\",\"ts\":1,\"dur\":1}]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: traceEvents[0].ph: not a string" },
  { "import-trace-cat-number", "t.json", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":7,\"name\":\"x\",\"ts\":1,\"dur\":1}]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: traceEvents[0].cat: not a string" },
  { "import-trace-args-string", "t.json", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":\"x\"}]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: traceEvents[0].args: not an object" },
  { "import-trace-gpu-name-number", "t.json", "{\"deviceProperties\":[{\"name\":5}],\"traceEvents\":[]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: deviceProperties[0].name: not a string" },
  /* nesting bounded before parsing (json-glib recursed until the stack overflowed) */
  { "import-trace-deep-nesting", "t.json", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json:1: JSON nested deeper than 64 levels" },
  /* compressed input capped on its inflated size */
  { "import-trace-gzip-bomb", "m.model", GOOD_MODEL, 0, NULL, NULL, SETUP_GZIP_BOMB, { "fit", "--db", "c.db", "--import", "bomb.json.gz", "--model", "m.model", "--batch", "32" }, "bomb.json.gz: inflates to more than 64 MiB" },
  { "import-trace-gzip-truncated", "t.json.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00", 8, "m.model", GOOD_MODEL, 0, { "fit", "--db", "c.db", "--import", "t.json.gz", "--model", "m.model", "--batch", "32" }, "t.json.gz: damaged gzip data" },
  /* files: regular, capped, never blocking */
  { "import-fifo", NULL, NULL, 0, NULL, NULL, SETUP_FIFO, { "fit", "--db", "c.db", "--import", "fifo" }, "fifo: not a regular file (a FIFO)" },
  { "import-dev-zero", NULL, NULL, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "/dev/zero" }, "/dev/zero: not a regular file (a device)" },
  { "import-directory", NULL, NULL, 0, NULL, NULL, SETUP_DIR, { "fit", "--db", "c.db", "--import", "adir" }, "adir: not a regular file (a directory)" },
  { "import-65-mib-log", NULL, NULL, 0, NULL, NULL, SETUP_BIG, { "fit", "--db", "c.db", "--import", "big.model" }, "big.model: 68157440 bytes; input files are limited to 64 MiB" },
  /* every number through the range table */
  { "import-nccl-nthread-2^31", "n.txt", "# nThread 2147483648 nGpus 8\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:1: nThread: \"2147483648\" must be a whole number from 1 to 1024" },
  { "import-nccl-ngpus-negative", "n.txt", "# nThread 1 nGpus -8\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:1: nGpus: \"-8\" must be a whole number from 1 to 1024" },
  { "import-nccl-size-2^63", "n.txt", "9223372036854775807 256 float sum -1 10.00 0.10 0.09 0 10.00 0.10 0.09 0\n", 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:1: size: \"9223372036854775807\"" },
  { "import-nccl-time-inf", "n.txt", "1024 256 float sum -1 inf 0.10 0.09 0 10.00 0.10 0.09 0\n", 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:1: out-of-place time: \"inf\"" },
  { "import-nccl-nodes-not-dividing", "n.txt", "# nThread 1 nGpus 4\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt", "--nodes", "3" }, "--nodes: 3 nodes for the 4 ranks of n.txt (the ranks must divide evenly" },
  { "import-nccl-nodes-under-hosts", "n.txt", "#   Rank  0 Pid   1000 on host-a device  0 [0x10] NVIDIA A100-SXM4-40GB\n#   Rank  1 Pid   1001 on host-b device  0 [0x10] NVIDIA A100-SXM4-40GB\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt", "--nodes", "1" }, "--nodes: 1, but the rank lines of n.txt name 2 hosts (host-a,host-b)" },
  { "import-nccl-nodes-over-ranks", "n.txt", "# nThread 1 nGpus 2\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt", "--nodes", "4" }, "--nodes: 4 nodes for the 2 ranks of n.txt" },
  /* ---- issue 19: the other collectives' outputs ---- */
  { "import-nccl-all-gather-unnamed", "n.txt", "1024 32 float none -1 10.00 0.10 0.09 0 10.00 0.10 0.09 0\n", 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:1: reduction \"none\" and no root: all_gather_perf or alltoall_perf" },
  { "import-nccl-alltoall", "n.txt", "# Collective test starting: alltoall_perf\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:1: alltoall_perf output: ddpsim imports all_reduce_perf, all_gather_perf, reduce_scatter_perf and broadcast_perf" },
  { "import-nccl-mixed-ops", "n.txt", "# Collective test starting: all_reduce_perf\n" NCCL_ROW "# Collective test concluded: all_gather_perf\n", 0, NULL, NULL, SETUP_DB_GOOD, { "fit", "--db", "good.db", "--import", "n.txt" }, "n.txt:3: all_gather_perf after all_reduce_perf (line 1): one collective per file" },
  { "import-nccl-broadcast-with-reduction", "n.txt", "# Collective test starting: broadcast_perf\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" }, "n.txt:2: broadcast_perf output with a reduction, but the test reduces nothing" },
  { "import-trace-negative-dur", "t.json", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":-5,\"args\":{\"correlation\":1}}]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: traceEvents[0].dur: \"-5\" must be a number from 0 to 1e+12" },
  { "import-trace-infinite-step", "t.json", "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"ts\":1e308,\"dur\":1e308}]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: traceEvents[0].ts: \"1e+308\" must be a number from" },
  { "import-trace-correlation-1e30", "t.json", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{\"correlation\":1e30}}]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: traceEvents[0].args.correlation: \"1e+30\" must be a whole number from 0 to" },
  { "import-trace-compute-major", "t.json", "{\"deviceProperties\":[{\"computeMajor\":4294967296,\"computeMinor\":0}],\"traceEvents\":[]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: deviceProperties[0].computeMajor: \"4294967296\" must be a whole number from 0 to 99" },
  { "import-trace-cuda-version", "t.json", "{\"cuda_runtime_version\":1e300,\"traceEvents\":[]}", 0, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT }, "t.json: trace.cuda_runtime_version:" },

  /* ---- issue 20: fit's own flags through the range table ---- */
  { "fit-nodes-hex", "n.txt", NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt", "--nodes", "0x10" }, "--nodes: \"0x10\" must be a whole number from 1 to 16777216" },
  { "fit-nodes-2^31-1", "n.txt", NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt", "--nodes", "2147483647" }, "--nodes: \"2147483647\"" },
  { "fit-batch-inf", "t.json", "{}", 0, "m.model", GOOD_MODEL, 0, { "fit", "--db", "c.db", "--import", "t.json", "--model", "m.model", "--batch", "inf" }, "--batch: \"inf\" must be a whole number from 1 to 16777216" },
  { "fit-batch-half", "t.json", "{}", 0, "m.model", GOOD_MODEL, 0, { "fit", "--db", "c.db", "--import", "t.json", "--model", "m.model", "--batch", "0.5" }, "--batch: \"0.5\"" },

  /* ---- issue 20: atomic import and fit — the database byte for byte as it was ---- */
  { "import-refused-db-unchanged", "n.txt", "# nThread 1 nGpus -8\n" NCCL_ROW, 0, NULL, NULL, SETUP_DB_GOOD, { "fit", "--db", "good.db", "--import", "n.txt" }, "n.txt:1: nGpus:" },
  { "import-then-fit-refused-db-unchanged", "n.txt", "# nThread 1 nGpus 8\n" NCCL_ROW, 0, NULL, NULL, SETUP_DB_GOOD, { "fit", "--db", "good.db", "--import", "n.txt", "--run", "99" }, "no calibration run 99" },
  { "import-then-fit-refused-new-db-removed", "n.txt", "# nThread 1 nGpus 8\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "new.db", "--import", "n.txt", "--run", "99" }, "no calibration run 99" },

  /* ---- issue 20: calibration databases are untrusted ---- */
  { "db-trigger-fit", NULL, NULL, 0, NULL, NULL, SETUP_DB_TRIGGER, { "fit", "--db", "trig.db" }, "trig.db: a trigger \"wipe\" that ddpsim did not create" },
  { "db-trigger-calibration", NULL, NULL, 0, NULL, NULL, SETUP_DB_TRIGGER, { "predict", "--calibration", "trig.db" }, "trig.db: a trigger \"wipe\"" },
  { "db-view", NULL, NULL, 0, NULL, NULL, SETUP_DB_VIEW, { "fit", "--db", "view.db" }, "view.db: a view \"v\" that ddpsim did not create" },
  { "db-extra-index", NULL, NULL, 0, NULL, NULL, SETUP_DB_INDEX, { "fit", "--db", "index.db", "--no-store" }, "index.db: an index \"extra\"" },
  { "db-curve-duplicate-size", NULL, NULL, 0, NULL, NULL, SETUP_DB_CURVE_DUP, { "allreduce", "--calibration", "curve.db" }, "fit_allreduce_curve, row 2: bytes = 8 twice" },
  { "fit-db-dev-zero", "n.txt", "# nThread 1 nGpus 2\n" NCCL_ROW, 0, NULL, NULL, 0, { "fit", "--db", "/dev/zero", "--import", "n.txt" }, "/dev/zero: a device, FIFO or socket, not a calibration database file" },
  { "db-fit-text-alpha", NULL, NULL, 0, NULL, NULL, SETUP_DB_TEXT_ALPHA, { "allreduce", "--calibration", "text.db" }, "alpha_us is not a number (expected 0 to" },
  { "db-curve-zero-time", NULL, NULL, 0, NULL, NULL, SETUP_DB_CURVE_ZERO, { "allreduce", "--calibration", "zero.db" }, "time_us = 0 (expected above 0" },
  { "db-op-unknown", NULL, NULL, 0, NULL, NULL, SETUP_DB_OP_UNKNOWN, { "collective", "--op", "all_gather", "--calibration", "op.db" }, "op.db: fit_collective_curve, row 1: op = \"alltoall\" (expected all_gather, reduce_scatter or broadcast)" },

  /* ---- issue 20: outputs refuse non-regular targets and name the user's path ---- */
  { "sweep-output-fifo", NULL, NULL, 0, NULL, NULL, SETUP_FIFO, { "sweep", "--gpus", "8", "-o", "fifo" }, "-o: \"fifo\" exists and is not a regular file (a FIFO)" },
  { "sweep-output-dev-full", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--gpus", "8", "-o", "/dev/full" }, "-o: \"/dev/full\" exists and is not a regular file (a device)" },
  { "sweep-output-symlink", NULL, NULL, 0, NULL, NULL, SETUP_LINK, { "sweep", "--gpus", "8", "-o", "link" }, "-o: \"link\" exists and is not a regular file (a symbolic link)" },
  { "sweep-output-name-too-long", NULL, NULL, 0, NULL, NULL, 0, { "sweep", "--gpus", "8", "--iterations", "1", "-o", LONG_NAME }, "-o: cannot write \"" LONG_NAME "\": File name too long" },
  { "timeline-trace-fifo", NULL, NULL, 0, NULL, NULL, SETUP_FIFO, { "timeline", "--trace", "fifo" }, "--trace: \"fifo\" exists and is not a regular file (a FIFO)" },
  { "timeline-trace-dev-null", NULL, NULL, 0, NULL, NULL, 0, { "timeline", "--trace", "/dev/null" }, "--trace: \"/dev/null\" exists and is not a regular file (a device)" },

  /* ---- issue 19: [model] fsdp_units and what contradicts it; FSDP gradient accumulation; ZeRO's
   * overlap_with_ddp hooks ---- */
  { "fsdp-units-unknown", "m.model", UNITS_MODEL("b"), 0, NULL, NULL, 0, { PREDICT, "--mode", "fsdp" }, "m.model:3: model.fsdp_units: b is not the module of any layer" },
  { "fsdp-units-twice", "m.model", UNITS_MODEL("a;a"), 0, NULL, NULL, 0, { PREDICT, "--mode", "fsdp" }, "m.model:3: model.fsdp_units: a is listed twice" },
  { "fsdp-units-empty", "m.model", UNITS_MODEL(";"), 0, NULL, NULL, 0, { PREDICT }, "m.model:3: model.fsdp_units: names no module" },
  { "fsdp-units-wrap-blocks-flag", "m.model", UNITS_MODEL("a"), 0, NULL, NULL, 0, { PREDICT, "--mode", "fsdp", "--wrap-blocks", "2" }, "--wrap-blocks: model m names its own FSDP units ([model] fsdp_units, m.model:3)" },
  { "fsdp-accumulate-flag", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--mode", "fsdp", "--accumulate", "2", "--fsdp-accumulate", "sometimes" }, "--fsdp-accumulate: \"sometimes\" is not one of no-sync|sharded" },
  { "fsdp-accumulate-key", "s.scenario", SCENARIO("8", "fsdp_accumulate = sometimes"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.fsdp_accumulate: \"sometimes\" is not one of no-sync|sharded" },
  { "zero-hook-flag", NULL, NULL, 0, NULL, NULL, 0, { "predict", "--mode", "zero1", "--overlap-with-ddp", "--zero-hook", "eager" }, "--zero-hook: \"eager\" is not one of step|interleaved" },
  { "zero-hook-key", "s.scenario", SCENARIO("8", "zero_hook = eager"), 0, NULL, NULL, 0, { "predict", "s.scenario" }, "s.scenario:5: training.zero_hook: \"eager\" is not one of step|interleaved" },
  { "zero-hook-without-overlap-key", "s.scenario", SCENARIO("8", "zero_hook = interleaved"), 0, NULL, NULL, 0, { "predict", "s.scenario", "--mode", "zero1" }, "s.scenario:5: training.zero_hook: the ddp_zero_hook.py hooks need ZeroRedundancyOptimizer(overlap_with_ddp=True)" },
  { "overlap-with-ddp-unused-key", "s.scenario", SCENARIO("8", "overlap_with_ddp = true"), 0, NULL, NULL, 0, { "predict", "s.scenario", "--mode", "zero1", "--find-unused-parameters" }, "s.scenario:5: training.overlap_with_ddp: ZeroRedundancyOptimizer(overlap_with_ddp=True) never steps" },
  { "fsdp-units-wrap-blocks-key", "m.model", UNITS_MODEL("a"), 0, "s.scenario", SCENARIO("8", "wrap_blocks = 2"), 0, { "predict", "s.scenario", "--model", "m.model" }, "s.scenario:5: training.wrap_blocks: model m names its own FSDP units" },
};

/* ---- the case directory ---- */

typedef struct {
  gint64 size, mtime_ns;
  char *digest;     /* SHA-256 of the contents of a regular file, "" otherwise */
  guint mode;
} Entry;

static void
entry_free(gpointer p)
{
  Entry *e = p;
  g_free(e->digest);
  g_free(e);
}

/* name (relative, recursive) → Entry, for every file under @dir. */
static void
snapshot_into(GHashTable *snap, const char *dir, const char *prefix)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  for (const char *name; (name = g_dir_read_name(d));) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *rel = prefix ? g_build_filename(prefix, name, NULL) : g_strdup(name);
    struct stat st;
    g_assert_cmpint(lstat(path, &st), ==, 0);
    Entry *e = g_new0(Entry, 1);
    e->size = st.st_size;
    e->mtime_ns = (gint64)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    e->mode = st.st_mode;
    e->digest = g_strdup("");
    if (S_ISREG(st.st_mode) && st.st_size < (1 << 24)) {
      g_autofree char *text = NULL;
      gsize length = 0;
      g_assert_true(g_file_get_contents(path, &text, &length, NULL));
      g_free(e->digest);
      e->digest = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, length);
    }
    if (S_ISDIR(st.st_mode))
      snapshot_into(snap, path, rel);
    g_hash_table_insert(snap, g_steal_pointer(&rel), e);
  }
}

static GHashTable *
snapshot(const char *dir)
{
  GHashTable *snap = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, entry_free);
  snapshot_into(snap, dir, NULL);
  return snap;
}

static void
assert_same(GHashTable *before, GHashTable *after, const char *name)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, after);
  while (g_hash_table_iter_next(&it, &key, &value))
    if (!g_hash_table_contains(before, key))
      g_error("%s: created \"%s\"", name, (const char *)key);
  g_hash_table_iter_init(&it, before);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const Entry *b = value, *a = g_hash_table_lookup(after, key);
    if (!a)
      g_error("%s: removed \"%s\"", name, (const char *)key);
    if (a->size != b->size || a->mtime_ns != b->mtime_ns || a->mode != b->mode || strcmp(a->digest, b->digest) != 0)
      g_error("%s: changed \"%s\"", name, (const char *)key);
  }
}

static void
write_file(const char *dir, const char *name, const char *text, gsize length)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_assert_true(g_file_set_contents(path, text, length ? (gssize)length : -1, NULL));
}

static gint64
add_run(DdpCalibDb *db)
{
  DdpCalibRun run = { .host = "test", .gpu_name = "NVIDIA H100 80GB HBM3", .gpus_per_node = 8, .nodes = 1,
                      .ranks = 8, .sm_arch = 90, .sm_count = 132, .gpu_memory_bytes = 85000000000, .program = "test" };
  g_autoptr(GError) error = NULL;
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_no_error(error);
  return id;
}

/* Runs @sql on the database file @path behind ddpsim's back (a user's hand edit). */
static void
edit_db(const char *path, const char *sql)
{
  sqlite3 *raw = NULL;
  g_assert_cmpint(sqlite3_open(path, &raw), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_exec(raw, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_close(raw), ==, SQLITE_OK);
}

/* A database with one AllReduce point of @bytes, and (when @alpha_us ≥ 0) a stored fit. */
static void
make_db(const char *path, gint64 bytes, double alpha_us, gboolean drop_table)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(path, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  gint64 run = add_run(db);
  g_assert_true(ddp_calibdb_batch_begin(db, run, "allreduce/1", &error));
  DdpCalibAllreducePoint p = { .algorithm = "Ring", .protocol = "Simple", .ranks = 8, .nodes = 1, .bytes = bytes,
                               .in_place = TRUE, .iterations = 20, .time_us = 100, .min_us = 100, .max_us = 100,
                               .algbw_GBs = 1, .busbw_GBs = 1.75 };
  g_assert_true(ddp_calibdb_batch_add_allreduce(db, &p, &error));
  g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
  if (alpha_us >= 0) {
    g_autofree char *now = ddp_calibdb_now();
    g_autofree char *runs = g_strdup_printf("%" G_GINT64_FORMAT, run);
    DdpCalibFit fit = { .created = now, .runs = runs, .gpu_name = "NVIDIA H100 80GB HBM3", .gpu_spec = "h100",
                        .program = "test", .note = "" };
    g_assert_cmpint(ddp_calibdb_fit_begin(db, &fit, &error), >, 0);
    DdpCalibAllreduceFit f = { .algorithm = "Ring", .protocol = "Simple", .ranks = 8, .nodes = 1, .alpha_us = alpha_us,
                               .algbw_GBs = 100, .busbw_GBs = 175, .n_points = 1, .min_bytes = 8, .max_bytes = 8 };
    g_assert_true(ddp_calibdb_fit_add_allreduce(db, &f, &error));
    g_assert_true(ddp_calibdb_fit_commit(db, &error));
  }
  g_assert_no_error(error);
  g_clear_pointer(&db, ddp_calibdb_close);
  if (drop_table) {
    sqlite3 *raw = NULL;
    g_assert_cmpint(sqlite3_open(path, &raw), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(raw, "DROP TABLE fit_residuals", NULL, NULL, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_close(raw), ==, SQLITE_OK);
  }
}

static void
setup_case(const char *dir, Setup setup)
{
  g_autofree char *path = NULL;
  switch (setup) {
  case SETUP_NONE:
    break;
  case SETUP_FIFO:
    path = g_build_filename(dir, "fifo", NULL);
    g_assert_cmpint(mkfifo(path, 0600), ==, 0);
    break;
  case SETUP_DIR:
    path = g_build_filename(dir, "adir", NULL);
    g_assert_cmpint(g_mkdir(path, 0700), ==, 0);
    break;
  case SETUP_BIG: {
    path = g_build_filename(dir, "big.model", NULL);
    write_file(dir, "big.model", "[model]\n", 0);
    g_assert_cmpint(truncate(path, (off_t)65 << 20), ==, 0);   /* sparse: costs no disk */
    break;
  }
  case SETUP_MANY_LAYERS: {
    GString *text = g_string_new("[model]\nname = many\n");
    for (guint i = 0; i <= DDP_MAX_LAYERS; i++)
      g_string_append_printf(text, "[layer l%u]\n", i);
    write_file(dir, "many.model", text->str, text->len);
    g_string_free(text, TRUE);
    break;
  }
  case SETUP_DB_EMPTY:
    write_file(dir, "empty.db", "", 0);
    break;
  case SETUP_DB_DROPPED:
    path = g_build_filename(dir, "dropped.db", NULL);
    make_db(path, 8, -1, TRUE);
    break;
  case SETUP_DB_HUGE_POINT:
    path = g_build_filename(dir, "point.db", NULL);
    make_db(path, (gint64)1 << 62, -1, FALSE);
    break;
  case SETUP_DB_HUGE_ALPHA:
    path = g_build_filename(dir, "alpha.db", NULL);
    make_db(path, 8, 1e308, FALSE);
    break;
  case SETUP_OLD_OUTPUT:
    write_file(dir, "out.png", "an old image\n", 0);
    break;
  case SETUP_DB_GOOD:
    path = g_build_filename(dir, "good.db", NULL);
    make_db(path, 8, -1, FALSE);
    break;
  case SETUP_DB_TRIGGER:
    path = g_build_filename(dir, "trig.db", NULL);
    make_db(path, 8, -1, FALSE);
    edit_db(path, "CREATE TRIGGER wipe AFTER INSERT ON fits BEGIN DELETE FROM allreduce_points; END");
    break;
  case SETUP_DB_VIEW:
    path = g_build_filename(dir, "view.db", NULL);
    make_db(path, 8, -1, FALSE);
    edit_db(path, "CREATE VIEW v AS SELECT * FROM runs");
    break;
  case SETUP_DB_INDEX:
    path = g_build_filename(dir, "index.db", NULL);
    make_db(path, 8, -1, FALSE);
    edit_db(path, "CREATE INDEX extra ON runs(host)");
    break;
  case SETUP_DB_CURVE_DUP:
  case SETUP_DB_CURVE_ZERO:
    path = g_build_filename(dir, setup == SETUP_DB_CURVE_DUP ? "curve.db" : "zero.db", NULL);
    make_db(path, 8, 10, FALSE);
    edit_db(path, setup == SETUP_DB_CURVE_DUP
                    ? "INSERT INTO fit_allreduce_curve VALUES (1, 'Ring', 'Simple', 8, 1, 8, 10.0);"
                      "INSERT INTO fit_allreduce_curve VALUES (1, 'Ring', 'Simple', 8, 1, 8, 12.0);"
                    : "INSERT INTO fit_allreduce_curve VALUES (1, 'Ring', 'Simple', 8, 1, 8, 0.0);");
    break;
  case SETUP_DB_TEXT_ALPHA:
    path = g_build_filename(dir, "text.db", NULL);
    make_db(path, 8, 10, FALSE);
    edit_db(path, "UPDATE fit_allreduce SET alpha_us = 'x';");
    break;
  case SETUP_DB_OP_UNKNOWN:
    path = g_build_filename(dir, "op.db", NULL);
    make_db(path, 8, 10, FALSE);
    edit_db(path, "INSERT INTO fit_collective_curve VALUES (1, 'alltoall', 'auto', 'auto', 8, 1, 8, 10.0);");
    break;
  case SETUP_GZIP_BOMB: {
    g_autoptr(GZlibCompressor) z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
    gsize n = (gsize)80 << 20, out_size = n / 500 + 65536, read = 0, written = 0;
    g_autofree char *spaces = g_malloc(n), *gz = g_malloc(out_size);
    memset(spaces, ' ', n);
    g_assert_cmpint(g_converter_convert(G_CONVERTER(z), spaces, n, gz, out_size, G_CONVERTER_INPUT_AT_END, &read,
                                        &written, NULL), ==, G_CONVERTER_FINISHED);
    write_file(dir, "bomb.json.gz", gz, written);
    break;
  }
  case SETUP_LINK:
    path = g_build_filename(dir, "link", NULL);
    write_file(dir, "out.csv", "an old table\n", 0);
    g_assert_cmpint(symlink("out.csv", path), ==, 0);
    break;
  }
}

/* Runs $DDPSIM in @dir with @argv; returns the exit status, fills @out and @err. */
static int
run_in(const char *dir, const char *const *argv, const char *env_name, const char *env_value, char **out, char **err)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new();
  g_ptr_array_add(args, (char *)g_getenv("DDPSIM"));
  for (guint i = 0; argv[i]; i++)
    g_ptr_array_add(args, (char *)argv[i]);
  g_ptr_array_add(args, NULL);
  g_auto(GStrv) envp = g_get_environ();
  if (env_name)
    envp = g_environ_setenv(envp, env_name, env_value, TRUE);
  int wait_status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(dir, (char **)args->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, out, err, &wait_status, &error));
  g_assert_no_error(error);
  g_autoptr(GError) exit_error = NULL;
  if (g_spawn_check_wait_status(wait_status, &exit_error))
    return 0;
  return exit_error->domain == G_SPAWN_EXIT_ERROR ? exit_error->code : 128;
}

static void
check_case(const Case *c)
{
  g_autofree char *dir = g_dir_make_tmp("ddpsim-badinput-XXXXXX", NULL);
  g_assert_nonnull(dir);
  if (c->file)
    write_file(dir, c->file, c->text, c->length);
  if (c->file2)
    write_file(dir, c->file2, c->text2, 0);
  setup_case(dir, c->setup);
  g_autoptr(GHashTable) before = snapshot(dir);
  g_autofree char *out = NULL, *err = NULL;
  int status = run_in(dir, c->argv, NULL, NULL, &out, &err);
  g_autoptr(GHashTable) after = snapshot(dir);
  if (status != 2)
    g_error("%s: exit status %d, not 2 (stderr: %s)", c->name, status, err);
  g_assert_cmpstr(out, ==, "");
  /* one line, no control characters but its newline, and short */
  g_assert_true(g_str_has_suffix(err, "\n"));
  for (const char *p = err; *p; p++)
    if ((guchar)*p < 0x20 && !(*p == '\n' && p[1] == '\0'))
      g_error("%s: control character 0x%02x in \"%s\"", c->name, (guchar)*p, err);
  g_assert_cmpuint(strlen(err), <, 1200);
  g_assert_true(g_str_has_prefix(err, "ddpsim"));
  if (!strstr(err, c->expect))
    g_error("%s: stderr \"%s\" lacks \"%s\"", c->name, err, c->expect);
  assert_same(before, after, c->name);
  run_remove_tree(dir);
}

static void
test_case(gconstpointer data)
{
  check_case(data);
}

/* A 1 MB value: the message echoes at most a few hundred characters of it. */
static void
test_megabyte_line(void)
{
  GString *text = g_string_new(MODEL "forward_flops = ");
  for (int i = 0; i < (1 << 20); i++)
    g_string_append_c(text, '7');
  g_string_append(text, "\nbackward_flops = 1\nparams = a.w:1\n");
  Case c = { "megabyte-line", "m.model", text->str, text->len, NULL, NULL, 0, { PREDICT }, "m.model:6: layer a.forward_flops: \"777" };
  check_case(&c);
  g_string_free(text, TRUE);
}

/* Issue 20, caps before work: each refusal comes before the work the input would cost (a 1.3 MB
 * grid axis spun a minute in its duplicate check; a trace of 8·10^6 values would take ~1 GB as a
 * json-glib tree; a log of 10 001 result rows). */
static void
test_caps_before_work(void)
{
  GString *grid = g_string_new("[sweep]\nseeds = 0");
  for (guint i = 1; i < 200000; i++)
    g_string_append_printf(grid, ",%u", i);
  g_string_append_c(grid, '\n');
  Case c1 = { "grid-axis-200000", "g.ini", grid->str, grid->len, NULL, NULL, 0, { "sweep", "--grid", "g.ini" },
              "g.ini:2: sweep.seeds: 200000 values; a grid has at most 100000 points" };
  check_case(&c1);
  g_string_free(grid, TRUE);

  GString *trace = g_string_new("{\"traceEvents\":[0");
  for (guint i = 0; i < DDP_MAX_JSON_VALUES; i++)
    g_string_append(trace, ",0");
  g_string_append(trace, "]}");
  Case c2 = { "trace-values-cap", "t.json", trace->str, trace->len, "m.model", GOOD_MODEL, 0, { TRACE_IMPORT },
              "t.json:1: more than 8000000 JSON values" };
  check_case(&c2);
  g_string_free(trace, TRUE);

  GString *log = g_string_new("# nThread 1 nGpus 8\n");
  for (guint i = 0; i <= DDP_MAX_IMPORT_ROWS; i++)
    g_string_append(log, NCCL_ROW);
  Case c3 = { "nccl-rows-cap", "n.txt", log->str, log->len, NULL, NULL, 0, { "fit", "--db", "c.db", "--import", "n.txt" },
              "n.txt:10002: more than 10000 result rows" };
  check_case(&c3);
  g_string_free(log, TRUE);
}

/* The help writes "8,16,…,1024": that form works, in a UTF-8 locale and in plain C. */
static void
test_unicode_ellipsis(void)
{
  const char *locales[] = { "C.UTF-8", "C" };
  for (guint i = 0; i < G_N_ELEMENTS(locales); i++) {
    g_autofree char *dir = g_dir_make_tmp("ddpsim-badinput-XXXXXX", NULL);
    const char *argv[] = { "scale", "--gpus", "1,2,…,8", "--iterations", "1", "--csv", NULL };
    g_autofree char *out = NULL, *err = NULL;
    int status = run_in(dir, argv, "LC_ALL", locales[i], &out, &err);
    if (status != 0)
      g_error("LC_ALL=%s: exit %d: %s", locales[i], status, err);
    /* rows 1, 2, 4, 8 after the header */
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 6);
    g_assert_true(g_str_has_prefix(lines[1], "1,"));
    g_assert_true(g_str_has_prefix(lines[4], "8,"));
    const char *help[] = { "scale", "--help", NULL };
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);
    g_assert_cmpint(run_in(dir, help, "LC_ALL", locales[i], &out, &err), ==, 0);
    g_assert_nonnull(strstr(out, "[OPTION…]"));   /* not "[OPTION?]" */
    g_rmdir(dir);
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_assert_cmpuint(G_N_ELEMENTS(cases), >=, 100);
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = g_strdup_printf("/badinput/%s", cases[i].name);
    g_test_add_data_func(path, &cases[i], test_case);
  }
  g_test_add_func("/badinput/megabyte-line", test_megabyte_line);
  g_test_add_func("/badinput/caps-before-work", test_caps_before_work);
  g_test_add_func("/badinput/unicode-ellipsis", test_unicode_ellipsis);
  return g_test_run();
}
