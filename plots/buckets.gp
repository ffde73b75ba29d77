# buckets.gp — iteration time against DDP's bucket_cap_mb, one line per first-bucket size, the
# fastest point marked and PyTorch's default 25 MiB drawn, made by `ddpsim tune --plot FILE`.
#
# ddpsim writes the inputs beside a params.gp that defines them; to restyle, edit a copy of this
# script and run  gnuplot DIR/params.gp my-buckets.gp  on the files `--plot-data DIR` kept.
#
# Variables (params.gp):
#   plot_title            string (may hold "\n"; ddpsim puts its recommendation on the second line)
#   data (file)           one block per first-bucket size (gnuplot index 0, 1, …, two blank lines
#                         apart), caps ascending:  first_bucket_mb bucket_cap_mb iteration_ms  (MiB)
#   first_bucket_mbs      optional: the blocks' first-bucket sizes, space-separated ("1 4 16");
#                         default "1" (PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES)
#   best_bucket_cap_mb, best_first_bucket_mb
#                         optional: the fastest point; when unset, the row with the least time
#   output_file, output_format ("png" or "svg"; from output_file's extension when unset)
#
# Readable axes: the x ticks are the powers of two of the log2 axis written with %g (no
# "25.000000"), not one label per cap (16, 25 and 32 would overprint); 25 gets its own dashed line.

if (!exists("output_format")) output_format = (output_file[strlen(output_file)-2:] eq "svg") ? "svg" : "png"

if (output_format eq "svg") {
  set terminal svg size 1200, 720 dynamic noenhanced font "Sans,12" background "white"
} else {
  if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1200, 720 noenhanced font "Sans,11" background "white"
  } else {
    set terminal png size 1200, 720 noenhanced background "white"
  }
}
set output output_file

if (!exists("first_bucket_mbs")) first_bucket_mbs = "1"
n_first = words(first_bucket_mbs)
# STATS_pos_min_y: the x of the least y (over every block)
stats data using 2:3 nooutput
if (!exists("best_bucket_cap_mb")) best_bucket_cap_mb = STATS_pos_min_y
if (!exists("best_first_bucket_mb")) best_first_bucket_mb = real(word(first_bucket_mbs, 1))
# the fastest point's label grows away from the nearer edge, so it is never clipped
stats data using (log($2)) nooutput name "LOGX"
best_right = log(best_bucket_cap_mb) > (LOGX_min + LOGX_max) / 2
near(a, b) = abs(a - b) <= 1e-9 * (abs(b) + 1)
is_best(first, cap) = near(cap, best_bucket_cap_mb) && near(first, best_first_bucket_mb)

set title plot_title font ",13"
set logscale x 2
set format x "%g"
set xlabel "bucket_cap_mb (MiB, log scale)"
set ylabel "time per iteration (ms)"
set format y "%g"
set xtics nomirror
set ytics nomirror
set grid xtics ytics lc rgb "#e6e6e6"
set border 3
# the key in its own band at the bottom of the canvas, clear of the axis title
set bmargin 6
set key at screen 0.5, screen 0.01 center bottom horizontal
set offsets graph 0.04, graph 0.04, graph 0.12, graph 0.05
set arrow 1 from 25, graph 0 to 25, graph 1 nohead dt 2 lc rgb "#808080" back
set label 1 "PyTorch default 25" at 25, graph 1 left offset 0.5, -0.8 tc rgb "#606060"

colors = "#2b6cb0 #e67e22 #27ae60 #8e44ad #16a085 #7f8c8d"
plot for [i = 1:n_first] data index (i - 1) using 2:3 with linespoints lw 2.5 pt 7 ps 1.2 \
       lc rgb word(colors, (i - 1) % 6 + 1) \
       title (n_first > 1 ? sprintf("first bucket %s MiB", word(first_bucket_mbs, i)) : "iteration time"), \
     data using 2:(is_best($1, $2) ? $3 : NaN) with points pt 6 ps 3.5 lw 2.5 lc rgb "#c0392b" title "fastest", \
     data using 2:(is_best($1, $2) && !best_right ? $3 : NaN):(sprintf("fastest: %g MiB, %.3f ms", $2, $3)) \
       with labels left offset 1.5, 2.6 tc rgb "#c0392b" notitle, \
     data using 2:(is_best($1, $2) && best_right ? $3 : NaN):(sprintf("fastest: %g MiB, %.3f ms", $2, $3)) \
       with labels right offset -1.5, 2.6 tc rgb "#c0392b" notitle
