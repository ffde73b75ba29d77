# timeline.gp — Gantt chart of one simulated DDP iteration, drawn by `ddpsim timeline -o FILE`.
#
# ddpsim writes the inputs beside a params.gp that defines them; to restyle, edit a copy of this
# script and run  gnuplot DIR/params.gp my-timeline.gp  on the files `--plot-data DIR` kept.
#
# Variables (params.gp):
#   plot_title        string (may hold "\n")
#   lane_labels       array of strings: one lane per shown rank's compute stream (lane 0 at the
#                     top), then the last lane, the NCCL stream shared by all ranks
#   kinds             " forward backward … ": the segment kinds present (for the key)
#   x_min_ms          where the x axis starts (<= 0 when a fast rank started early)
#   iteration_ms      end of the iteration (the slowest rank's optimizer step)
#   exposed_start_ms, exposed_end_ms
#                     the exposed-communication tail, shaded: the slowest rank finished backward,
#                     the last AllReduce finished (equal when communication was all hidden)
#   exposed_comm_ms   this iteration's exposed communication: the tail plus the buffer broadcast
#   exposed_label     its annotation, the very text the title shows (one computation, in
#                     cmd-timeline.c; tests/test-timeline.c checks the two agree)
#   segments (file)   lane start_ms end_ms "kind" layer "name"
#   buckets (file)    index start_ms end_ms ready_ms launch_ms bytes "label"
#   n_buckets         its records (FSDP has none)
#   collectives (file) lane start_ms end_ms op "label": a sharded strategy's AllGathers (op 1),
#                     ReduceScatters (2), AllReduces (0) and broadcasts (3), each on its lane;
#                     comment-only under DDP
#   collective_ops    " 1 2 ": the ops present (for the key)
#   output_file, output_format ("png" or "svg"; from output_file's extension when unset)
#
# SVG contract (tests/test-timeline.c relies on it): the bucket bars are the first plot element,
# so gnuplot's SVG group id="gnuplot_plot_1", and have no key sample (their key entry is a
# separate keyentry), so that group holds exactly one filled <polygon> per bucket.  (Their border,
# drawn so that a bar shorter than a pixel still shows, is a <path>.)

if (!exists("output_format")) output_format = (output_file[strlen(output_file)-2:] eq "svg") ? "svg" : "png"

n_lanes = |lane_labels|
if (!exists("n_buckets")) {
  stats buckets using 1 nooutput   # before any range is set: stats honours them
  n_buckets = STATS_records
}
comm_lane = n_lanes - 1
plot_width = 1400
plot_height = 200 + 60 * n_lanes
if (plot_height < 480) plot_height = 480

if (output_format eq "svg") {
  set terminal svg size plot_width, plot_height dynamic noenhanced font "Sans,12" background "white"
} else {
  if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size plot_width, plot_height noenhanced font "Sans,10" background "white"
  } else {
    set terminal png size plot_width, plot_height noenhanced background "white"
  }
}
set output output_file

# ---- colours -------------------------------------------------------------------------------
# Alternate shades tell neighbouring layers (and buckets) apart without borders.
kind_color(k, odd) = \
  k eq "forward"   ? (odd ? 0x74c476 : 0x41ab5d) : \
  k eq "backward"  ? (odd ? 0xfdae6b : 0xf16913) : \
  k eq "hook"      ? 0x9e9ac8 : \
  k eq "delay"     ? 0x636363 : \
  k eq "wait"      ? 0xd0d0d0 : \
  k eq "host"      ? 0xf0f0f0 : \
  k eq "finalize"  ? 0xe7ba52 : \
  k eq "optimizer" ? 0x8c6bb1 : \
  k eq "broadcast" ? 0x17becf : \
  k eq "contention" ? 0xbdbdbd : 0x000000
bucket_color(i) = (int(i) % 2) ? 0x5b9bd5 : 0x2b6cb0
coll_color(op, i) = int(op) == 1 ? ((int(i) % 2) ? 0x74add1 : 0x4575b4) : \
                    int(op) == 2 ? ((int(i) % 2) ? 0xf46d43 : 0xd73027) : \
                    int(op) == 3 ? 0x17becf : 0x2b6cb0
if (!exists("collectives")) collectives = "/dev/null"
if (!exists("collective_ops")) collective_ops = " "
has_op(k) = strstrt(collective_ops, sprintf(" %d ", k)) > 0
has(k) = strstrt(kinds, " ".k." ") > 0
key_title(k, text) = has(k) ? text : ""

# ---- axes ----------------------------------------------------------------------------------
set title plot_title font ",13"
set xlabel "time from the start of the iteration (ms)"
span_ms = iteration_ms - x_min_ms
set xrange [x_min_ms - 0.01 * span_ms : iteration_ms + 0.02 * span_ms]
set yrange [comm_lane + 0.9 : -0.75]   # reversed: lane 0 on top; room under the NCCL lane for labels
set ytics () scale 0
do for [i = 1:n_lanes] { set ytics add (lane_labels[i] i - 1) }
set xtics nomirror
set mxtics 5
set grid xtics mxtics lc rgb "#ececec" lw 1, lc rgb "#f6f6f6" lw 1
set border 3
set tmargin 7
set rmargin 4
# the key in its own band at the bottom of the canvas, under the axis title (bmargin leaves it room)
set bmargin 8
set key at screen 0.5, screen 0.01 center bottom horizontal maxrows 3 samplen 2 spacing 1.2
set style fill solid 1.0 noborder
bar = 0.34                      # half the height of a bar
label_min_ms = 0.055 * span_ms  # narrower bucket bars are labelled underneath, on two staggered rows
label_under = n_buckets <= 32   # beyond that the labels would only overprint each other
under_y(i) = comm_lane + bar + 0.17 + 0.22 * (int(i) % 2)

# ---- the exposed-communication tail and the end of the iteration -----------------------------
exposed_ms = exposed_end_ms - exposed_start_ms
if (exposed_ms > 0) {
  set object 1 rect from exposed_start_ms, graph 0 to exposed_end_ms, graph 1 behind \
      fc rgb "#fbd3d3" fs solid 1.0 noborder
}
if (exposed_comm_ms > 0) {
  set label 1 exposed_label at exposed_end_ms, graph 1 right offset 0, 0.8 tc rgb "#c0392b"
} else {
  set label 1 "communication fully hidden" at iteration_ms, graph 1 right offset 0, 0.8 tc rgb "#2b6cb0"
}
set arrow 1 from iteration_ms, graph 0 to iteration_ms, graph 1 nohead dt 2 lc rgb "#404040" front
# right-aligned, above the exposed label: no text reaches past the plot's right edge
set label 2 sprintf("end %.3f ms", iteration_ms) at iteration_ms, graph 1 right offset 0, 2.0 tc rgb "#404040"

plot buckets using (($2 + $3) / 2):(comm_lane):2:3:(comm_lane - bar):(comm_lane + bar):(bucket_color($1)) \
       with boxxyerror lc rgb variable lw 1.5 fs solid 1.0 border notitle, \
     keyentry with boxxyerror fc rgb 0x2b6cb0 title (n_buckets > 0 ? "AllReduce (one bar per bucket)" : ""), \
     buckets using 4:(comm_lane - bar - 0.1):($2 - $4):(0) with vectors nohead dt 3 lc rgb "#606060" notitle, \
     buckets using 4:(comm_lane - bar - 0.1) with points pt 11 ps 1.1 lc rgb "#202020" title "bucket ready (last rank)", \
     buckets using (($2 + $3) / 2):(comm_lane):((($3 - $2) >= label_min_ms) ? stringcolumn(7) : "") \
       with labels tc rgb "white" font ",9" notitle, \
     buckets using (($2 + $3) / 2):(under_y($1)):((label_under && ($3 - $2) < label_min_ms) ? stringcolumn(7) : "") \
       with labels tc rgb "#1f4e79" font ",8" notitle, \
     segments using (($2 + $3) / 2):1:2:3:($1 - bar):($1 + bar):(kind_color(stringcolumn(4), int($5) % 2)) \
       with boxxyerror lc rgb variable notitle, \
     keyentry with boxxyerror fc rgb 0x41ab5d title key_title("forward", "forward (per layer)"), \
     keyentry with boxxyerror fc rgb 0xf16913 title key_title("backward", "backward (per layer)"), \
     keyentry with boxxyerror fc rgb 0x9e9ac8 title key_title("hook", "compression cast"), \
     keyentry with boxxyerror fc rgb 0x636363 title key_title("delay", "straggler delay"), \
     keyentry with boxxyerror fc rgb 0xd0d0d0 title key_title("wait", "waiting for AllReduce"), \
     keyentry with boxxyerror fc rgb 0xf0f0f0 title key_title("host", "host step boundary"), \
     keyentry with boxxyerror fc rgb 0xe7ba52 title key_title("finalize", "finalize (bucket to .grad)"), \
     keyentry with boxxyerror fc rgb 0x8c6bb1 title key_title("optimizer", "optimizer step"), \
     keyentry with boxxyerror fc rgb 0x17becf title key_title("broadcast", "buffer broadcast"), \
     keyentry with boxxyerror fc rgb 0xbdbdbd title key_title("contention", "compute slowed by NCCL (summed)"), \
     keyentry with boxxyerror fc rgb "#fbd3d3" title (exposed_ms > 0 ? "exposed communication" : ""), \
     collectives using (($2 + $3) / 2):1:2:3:($1 - bar):($1 + bar):(coll_color($4, $0)) \
       with boxxyerror lc rgb variable notitle, \
     keyentry with boxxyerror fc rgb 0x4575b4 title (has_op(1) ? "AllGather (per unit)" : ""), \
     keyentry with boxxyerror fc rgb 0xd73027 title (has_op(2) ? "ReduceScatter (per unit)" : ""), \
     keyentry with boxxyerror fc rgb 0x2b6cb0 title (has_op(0) && n_buckets == 0 ? "AllReduce (per unit)" : ""), \
     keyentry with boxxyerror fc rgb 0x17becf title (has_op(3) ? "parameter broadcast (per tensor)" : ""), \
     collectives using (($2 + $3) / 2):1:((($3 - $2) >= label_min_ms / 3) ? stringcolumn(5) : "") \
       with labels tc rgb "white" font ",8" notitle
