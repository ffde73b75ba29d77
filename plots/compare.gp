# compare.gp — a measured DDP iteration (a torch.profiler trace) above the predicted one, drawn by
# `ddpsim timeline --compare TRACE -o FILE`.  To restyle, edit a copy and run
#   gnuplot DIR/params.gp my-compare.gp   on the files `--plot-data DIR` kept.
#
# Variables (params.gp):
#   plot_title     string (may hold "\n")
#   lane_labels    array of 4 strings: measured compute, measured NCCL, predicted compute, predicted NCCL
#   end_ms         the latest end of any bar
#   lanes (file)   lane start_ms end_ms "kind": kind compute or allreduce; ms from each side's first kernel
#   output_file, output_format ("png" or "svg"; from output_file's extension when unset)

if (!exists("output_format")) output_format = (output_file[strlen(output_file)-2:] eq "svg") ? "svg" : "png"

n_lanes = |lane_labels|
plot_width = 1400
plot_height = 520
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

# measured lanes in darker shades than the predicted ones, compute orange, AllReduce blue
lane_color(lane, kind) = kind eq "allreduce" ? (lane < 2 ? 0x1f4e79 : 0x5b9bd5) : (lane < 2 ? 0xb35806 : 0xfdb863)

set title plot_title font ",13"
set xlabel "time from the first kernel of the iteration (ms)"
set xrange [-0.01 * end_ms : 1.02 * end_ms]
set yrange [n_lanes - 0.4 : -0.6]
set ytics () scale 0
do for [i = 1:n_lanes] { set ytics add (lane_labels[i] i - 1) }
set xtics nomirror
set mxtics 5
set grid xtics mxtics lc rgb "#ececec" lw 1, lc rgb "#f6f6f6" lw 1
set border 3
set rmargin 6
set arrow 1 from graph 0, first 1.5 to graph 1, first 1.5 nohead lc rgb "#909090" dt 2
set key outside below center horizontal samplen 2
set style fill solid 1.0 noborder
bar = 0.34

plot lanes using (($2 + $3) / 2):1:2:3:($1 - bar):($1 + bar):(lane_color($1, stringcolumn(4))) \
       with boxxyerror lc rgb variable notitle, \
     keyentry with boxxyerror fc rgb 0xb35806 title "compute kernels (measured)", \
     keyentry with boxxyerror fc rgb 0x1f4e79 title "AllReduce (measured)", \
     keyentry with boxxyerror fc rgb 0xfdb863 title "compute (predicted)", \
     keyentry with boxxyerror fc rgb 0x5b9bd5 title "AllReduce (predicted)"
