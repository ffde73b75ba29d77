# scaling.gp — scaling efficiency and iteration time against the number of GPUs, drawn by
# `ddpsim scale --plot FILE`.
#
# ddpsim writes the inputs beside a params.gp that defines them; to restyle, edit a copy of this
# script and run  gnuplot DIR/params.gp my-scaling.gp  on the files `--plot-data DIR` kept.
#
# Variables (params.gp):
#   plot_title   string (may hold "\n")
#   data (file)  one row per GPU count, ascending:
#                gpus nodes iteration_ms scaling_efficiency exposed_comm_ms cost_per_1k_samples
#                (scaling_efficiency as a fraction, by the definition the title states;
#                cost_per_1k_samples 0 when no price is known)
#   has_cost     optional: 1 to draw cost per 1000 samples beside the efficiency (right axis)
#   efficiency_label  optional: the left axis label naming the definition, e.g.
#                "weak-scaling efficiency T(1)/T(N) (%)" or "strong-scaling efficiency T(1)/(N·T(N)) (%)"
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

# Two panels sharing the GPU axis: efficiency (and cost, right axis) on top; iteration time and
# exposed communication below, each on its own axis, since exposed communication is often a
# hundredth of the iteration and would lie flat on a shared axis.
if (!exists("efficiency_label")) efficiency_label = "scaling efficiency (%)"
if (!exists("has_cost")) has_cost = 0
set multiplot title plot_title font ",13"
set logscale x 2
set xtics nomirror
set grid ytics lc rgb "#e6e6e6"
set offsets graph 0.03, graph 0.03, 0, 0
# fixed margins: the axis titles sit inside the canvas and the key goes between the panels' plots
set lmargin at screen 0.09
set rmargin at screen 0.89

set tmargin at screen 0.88
set bmargin at screen 0.56
set format x ""
set ylabel efficiency_label tc rgb "#2b6cb0"
set yrange [0:105]
set ytics nomirror tc rgb "#2b6cb0"
set key inside bottom left horizontal box opaque
if (has_cost) {
  set y2label "cost per 1000 samples" tc rgb "#27ae60"
  set y2range [0:*]
  set y2tics tc rgb "#27ae60"
  set border 11
  plot data using 1:($4 * 100):xtic(1) with linespoints lw 2.5 pt 7 ps 1.2 lc rgb "#2b6cb0" title "scaling efficiency", \
       data using 1:($4 * 100):(sprintf("%.1f%%", $4 * 100)) with labels offset 0, 1.1 tc rgb "#2b6cb0" font ",9" notitle, \
       data using 1:6 axes x1y2 with linespoints lw 2 pt 9 ps 1.0 lc rgb "#27ae60" title "cost per 1000 samples"
} else {
  unset y2tics
  unset y2label
  set border 3
  plot data using 1:($4 * 100):xtic(1) with linespoints lw 2.5 pt 7 ps 1.2 lc rgb "#2b6cb0" title "scaling efficiency", \
       data using 1:($4 * 100):(sprintf("%.1f%%", $4 * 100)) with labels offset 0, 1.1 tc rgb "#2b6cb0" font ",9" notitle
}

set tmargin at screen 0.50
set bmargin at screen 0.12
set format x "%g"
set xlabel "GPUs (log scale)"
set ylabel "time per iteration (ms)" tc rgb "#c0392b"
set yrange [0:*]
set ytics nomirror tc rgb "#c0392b"
set y2label "exposed communication (ms)" tc rgb "#e67e22"
set y2range [0:*]
set y2tics tc rgb "#e67e22"
set border 11
set key inside bottom left horizontal box opaque
plot data using 1:3:xtic(1) with linespoints lw 2 pt 5 ps 1.0 lc rgb "#c0392b" title "iteration time", \
     data using 1:5 axes x1y2 with linespoints lw 1.5 dt 2 pt 4 ps 1.0 lc rgb "#e67e22" title "exposed communication"
unset multiplot
