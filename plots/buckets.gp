# buckets.gp — iteration time against DDP's bucket_cap_mb, the best cap marked, drawn by
# `ddpsim tune --plot FILE`.
#
# ddpsim writes the inputs beside a params.gp that defines them; to restyle, edit a copy of this
# script and run  gnuplot DIR/params.gp my-buckets.gp  on the files `--plot-data DIR` kept.
#
# Variables (params.gp):
#   plot_title          string (may hold "\n")
#   data (file)         one row per cap, ascending:  bucket_cap_mb iteration_ms   (MiB, as PyTorch)
#   best_bucket_cap_mb  optional: the cap ddpsim recommends; when unset, the row with the least
#                       iteration time
#   output_file, output_format ("png" or "svg"; from output_file's extension when unset)

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

# STATS_pos_min_y: the x of the least y
stats data using 1:2 nooutput
if (!exists("best_bucket_cap_mb")) best_bucket_cap_mb = STATS_pos_min_y
is_best(cap) = abs(cap - best_bucket_cap_mb) <= 1e-9 * (abs(best_bucket_cap_mb) + 1)

set title plot_title font ",13"
set logscale x 2
set xlabel "bucket_cap_mb (MiB, log scale)"
set ylabel "time per iteration (ms)"
set xtics nomirror
set ytics nomirror
set grid xtics ytics lc rgb "#e6e6e6"
set border 3
set key outside below center horizontal
set offsets graph 0.04, graph 0.04, graph 0.12, graph 0.05

plot data using 1:2:xtic(1) with linespoints lw 2.5 pt 7 ps 1.2 lc rgb "#2b6cb0" title "iteration time", \
     data using 1:(is_best($1) ? $2 : NaN) with points pt 6 ps 3.5 lw 2.5 lc rgb "#c0392b" title "best", \
     data using 1:(is_best($1) ? $2 : NaN):(sprintf("best: %g MiB, %.3f ms", $1, $2)) \
       with labels offset 0, -2.2 tc rgb "#c0392b" notitle
