#!/usr/bin/env bash
# gossip_plot.sh: docs/data/gossip_*.csv (tools/plot/gossip.sh) -> the
# PNGs of docs/gossip.md in docs/img/, with /usr/bin/python3 (numpy) for
# the statistics and gnuplot for the pictures.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/docs/data
img=$root/docs/img
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 - "$data" "$tmp" <<'PY'
import csv, sys, os
import numpy as np
data, tmp = sys.argv[1], sys.argv[2]

def load(name):
    path = os.path.join(data, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))

def write(name, rows):
    with open(os.path.join(tmp, name), "w") as f:
        for r in rows:
            f.write(" ".join(str(x) for x in r) + "\n")

# Fig. 2: max over runs of the max relative error (capped at 1e3 for the
# log axis; inf/nan count as the cap), per algorithm and bit.
rows = load("gossip_fig2_bitpos.csv")
for alg in ("ps", "pf", "pflc", "pfcc", "recdbl"):
    out = []
    for b in range(64):
        e = [float(r["max_rel_err"]) for r in rows
             if r["alg"] == alg and int(r["bit"]) == b]
        if not e:
            continue
        e = [min(x, 1e3) if np.isfinite(x) else 1e3 for x in e]
        out.append((b, max(max(e), 1e-17)))
    write("fig2_%s.dat" % alg, out)

# Fig. 4: median and quartiles of the iterations vs tau.
rows = load("gossip_fig4_tau.csv")
for alg in ("pflc", "pfcc"):
    out = []
    for t in sorted({float(r["tau"]) for r in rows if r["alg"] == alg}):
        it = np.array([int(r["iterations"]) for r in rows
                       if r["alg"] == alg and float(r["tau"]) == t])
        out.append((t, np.median(it), np.percentile(it, 25),
                    np.percentile(it, 75)))
    write("fig4_%s.dat" % alg, out)

# Fig. 6: iterations vs the number of flips a run saw.
rows = load("gossip_fig6_flips.csv")
for alg in ("pflc", "pfcc"):
    out = []
    for k in sorted({int(r["flips"]) for r in rows if r["alg"] == alg}):
        it = np.array([int(r["iterations"]) for r in rows
                       if r["alg"] == alg and int(r["flips"]) == k])
        if len(it) >= 2:
            out.append((k, np.median(it), it.min(), it.max(), len(it)))
    write("fig6_%s.dat" % alg, out)

# Figs. 9-10: HPS median iterations vs N per eps.
rows = load("gossip_fig9_hps.csv")
for e in sorted({r["eps"] for r in rows}, key=float):
    out = []
    for n in sorted({int(r["ranks"]) for r in rows if r["eps"] == e}):
        it = [int(r["iterations"]) for r in rows
              if r["eps"] == e and int(r["ranks"]) == n]
        out.append((n, np.median(it), np.log2(n)))
    write("fig9_%g.dat" % float(e), out)

# Fig. 12: ARDB and HPFLC median, min, max iterations vs N per eps.
rows = load("gossip_fig12_ardb_hpflc.csv")
for alg in ("ardb", "hpflc"):
    for e in sorted({r["eps"] for r in rows}, key=float):
        out = []
        for n in sorted({int(r["ranks"]) for r in rows
                         if r["eps"] == e and r["alg"] == alg}):
            it = [int(r["iterations"]) for r in rows
                  if r["eps"] == e and r["alg"] == alg and
                  int(r["ranks"]) == n]
            out.append((n, np.median(it), min(it), max(it)))
        write("fig12_%s_%g.dat" % (alg, float(e)), out)

# Fig. 13: mean iteration overhead of one flip per bit (HPFLC), at the
# N of gossip.sh and at 2^20 (gossip_2p20.sh, one run per bit).
for src, dat in (("gossip_fig13_hpflc_flip.csv", "fig13.dat"),
                 ("gossip_fig13_hpflc_flip_2p20.csv", "fig13_2p20.dat")):
    rows = load(src)
    base = [int(r["iterations"]) for r in rows if int(r["bit"]) == -1]
    out = []
    if base:
        b0 = np.mean(base)
        for b in range(32):
            it = [int(r["iterations"]) for r in rows if int(r["bit"]) == b]
            if it:
                out.append((b, 100.0 * (np.mean(it) - b0) / b0))
    write(dat, out)
PY

cd "$tmp"
gp() { gnuplot -e "set terminal pngcairo size 800,500 font ',10'; $1"; }
gp "set output '$img/gossip_fig2_bitpos.png'; set logscale y; \
set format y '10^{%T}'; set xlabel 'position of the flipped bit (0 = mantissa LSB, 52-62 exponent, 63 sign)'; \
set ylabel 'max relative error over runs (capped at 10^3)'; set key top left; \
set title 'One bit flip, N = 32, eps = 1e-12 (ucft-sim)'; \
plot 'fig2_ps.dat' w lp t 'PS', 'fig2_pf.dat' w lp t 'PF', \
'fig2_pflc.dat' w lp t 'PFLC', 'fig2_pfcc.dat' w lp t 'PFCC', \
'fig2_recdbl.dat' w lp t 'recursive doubling'"
gp "set output '$img/gossip_fig4_tau.png'; set logscale x; \
set xlabel 'checksum threshold tau'; set ylabel 'iterations to eps (median, quartiles)'; \
set title 'N = 32, eps = 1e-12, flip rate 1e-3 per message (ucft-sim)'; \
plot 'fig4_pflc.dat' u 1:2:3:4 w yerrorlines t 'PFLC', \
'fig4_pfcc.dat' u 1:2:3:4 w yerrorlines t 'PFCC'"
gp "set output '$img/gossip_fig6_flips.png'; \
set xlabel 'bit flips in the run'; set ylabel 'iterations to eps (median, min-max)'; \
set title 'N = 32, eps = 1e-12, default tau (ucft-sim)'; \
plot 'fig6_pflc.dat' u 1:2:3:4 w yerrorlines t 'PFLC', \
'fig6_pfcc.dat' u (\$1+0.1):2:3:4 w yerrorlines t 'PFCC'"
plots=""
for f in fig9_*.dat; do
  e=${f#fig9_}; e=${e%.dat}
  plots="$plots'$f' u 1:2 w lp t 'HPS eps $e', "
done
gp "set output '$img/gossip_fig9_hps.png'; set logscale x 2; \
set xlabel 'ranks N'; set ylabel 'iterations to eps (median)'; set key top left; \
set title 'HPS, full topology, float (ucft-sim)'; \
plot $plots 'fig9_0.1.dat' u 1:3 w l dt 2 lc black t 'log2 N (recursive doubling)'"
plots=""
for f in fig12_*.dat; do
  t=${f#fig12_}; t=${t%.dat}
  plots="$plots'$f' u 1:2:3:4 w yerrorlines t '${t/_/ eps }', "
done
gp "set output '$img/gossip_fig12_ardb_hpflc.png'; set logscale x 2; set format x '2^{%L}'; \
set xlabel 'ranks N'; set ylabel 'iterations to eps (median, min-max)'; set key top left; \
set title 'ARDB and HPFLC, float (ucft-sim)'; plot ${plots%, }"
n13=$(awk -F, 'NR > 1 && $1 == -1 { print $3; exit }' \
  "$data/gossip_fig13_hpflc_flip.csv")
big=""
[ -s fig13_2p20.dat ] &&
  big=", 'fig13_2p20.dat' u 1:2 w p pt 7 ps 1.5 t 'N = 2^{20} (1 run)'"
gp "set output '$img/gossip_fig13_hpflc_flip.png'; set style fill solid 0.5; \
set boxwidth 0.8; set xlabel 'position of the flipped bit (float)'; set key top left; \
set xrange [-1:32]; set yrange [-0.1:*]; set ylabel 'mean iteration overhead (%)'; \
set title 'HPFLC, one flip, eps = 1e-3 (ucft-sim)'; \
plot 'fig13.dat' w boxes t 'N = $n13'$big"
echo "wrote $img/gossip_fig*.png"
