/*
 * Output of `ucft-bench pt2pt`: a table for people, or one JSON object per
 * size and line (--json) for scripts. Both come from the per-round numbers
 * of pt2pt_result_t:
 *   rtt     median over rounds of the per-round median round trip (us)
 *   ratio   ucft rtt / ucp rtt (above 1: ucft is slower)
 *   spread  (max - min) / median of the per-round medians, per path
 *   rr      min..max of the per-round ratios
 *   MB/s    median over rounds of the median-window bandwidth, 1e6 B/s;
 *           bw ratio = ucft / ucp (below 1: ucft is slower)
 */
#include "tools/bench/pt2pt.h"

#include <stdio.h>

typedef struct summary {
    double rtt[2], p99[2], mbps[2], spread[2];
    double ratio, rmin, rmax, bw_ratio;
} summary_t;

static void min_max(const double *v, int n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

static void summarise(const pt2pt_result_t *r, int rounds, summary_t *s)
{
    double ratios[PT2PT_MAX_ROUNDS] = {0};
    for (int p = 0; p < 2; p++) {
        double lo, hi;
        s->rtt[p] = bench_median_small(r->rtt_us[p], (size_t)rounds);
        s->p99[p] = bench_median_small(r->p99_us[p], (size_t)rounds);
        s->mbps[p] = bench_median_small(r->mbps[p], (size_t)rounds);
        min_max(r->rtt_us[p], rounds, &lo, &hi);
        s->spread[p] = s->rtt[p] > 0 ? (hi - lo) / s->rtt[p] : 0;
    }
    for (int i = 0; i < rounds; i++)
        ratios[i] = r->rtt_us[PT2PT_UCP][i] > 0
                        ? r->rtt_us[PT2PT_UCFT][i] / r->rtt_us[PT2PT_UCP][i]
                        : 0;
    min_max(ratios, rounds, &s->rmin, &s->rmax);
    s->ratio =
        s->rtt[PT2PT_UCP] > 0 ? s->rtt[PT2PT_UCFT] / s->rtt[PT2PT_UCP] : 0;
    s->bw_ratio =
        s->mbps[PT2PT_UCP] > 0 ? s->mbps[PT2PT_UCFT] / s->mbps[PT2PT_UCP] : 0;
}

void pt2pt_report_header(FILE *f, const pt2pt_run_info_t *info, int json)
{
    if (json)
        return; /* every JSON line carries the run information itself */
    fprintf(f,
            "# ucft-bench pt2pt: wait=%s  transport=%s  UCX_TLS=%s  "
            "rounds=%d\n"
            "# RTT (us): median of per-round medians, rank 0 -> 1 -> 0; "
            "spread = (max-min)/median\n"
            "#   of the round medians; rr = range of per-round ucft/ucp "
            "ratios\n",
            info->wait, info->transport, info->tls, info->rounds);
    if (info->bw)
        fprintf(f,
                "# MB/s (1e6 B/s): windowed stream of %d sends + 8-byte "
                "ack, median window\n",
                info->window);
    fprintf(f, "%8s %9s %9s %6s %11s %8s %8s %9s %9s", "size", "ucft_us",
            "ucp_us", "ratio", "rr", "ucft_spr", "ucp_spr", "ucft_p99",
            "ucp_p99");
    if (info->bw)
        fprintf(f, " %10s %10s %6s", "ucft_MB/s", "ucp_MB/s", "ratio");
    fputc('\n', f);
}

static void json_rounds(FILE *f, const char *key, const double *v, int n)
{
    fprintf(f, ",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.4f", i ? "," : "", v[i]);
    fputc(']', f);
}

void pt2pt_report_row(FILE *f, const pt2pt_run_info_t *info,
                      const pt2pt_result_t *r, int json)
{
    summary_t s;
    summarise(r, info->rounds, &s);
    if (!json) {
        char rr[32];
        snprintf(rr, sizeof(rr), "%.3f-%.3f", s.rmin, s.rmax);
        fprintf(f, "%8zu %9.3f %9.3f %6.3f %11s %7.1f%% %7.1f%% %9.3f %9.3f",
                r->size, s.rtt[PT2PT_UCFT], s.rtt[PT2PT_UCP], s.ratio, rr,
                100 * s.spread[PT2PT_UCFT], 100 * s.spread[PT2PT_UCP],
                s.p99[PT2PT_UCFT], s.p99[PT2PT_UCP]);
        if (info->bw)
            fprintf(f, " %10.1f %10.1f %6.3f", s.mbps[PT2PT_UCFT],
                    s.mbps[PT2PT_UCP], s.bw_ratio);
        fputc('\n', f);
        return;
    }
    fprintf(f,
            "{\"size\":%zu,\"ucft_rtt_us\":%.4f,\"ucp_rtt_us\":%.4f,"
            "\"ratio\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f,"
            "\"ucft_p99_us\":%.4f,\"ucp_p99_us\":%.4f",
            r->size, s.rtt[PT2PT_UCFT], s.rtt[PT2PT_UCP], s.ratio, s.rmin,
            s.rmax, s.p99[PT2PT_UCFT], s.p99[PT2PT_UCP]);
    if (info->bw)
        fprintf(f, ",\"ucft_mbps\":%.2f,\"ucp_mbps\":%.2f,\"bw_ratio\":%.4f",
                s.mbps[PT2PT_UCFT], s.mbps[PT2PT_UCP], s.bw_ratio);
    json_rounds(f, "ucft_rtt_rounds_us", r->rtt_us[PT2PT_UCFT], info->rounds);
    json_rounds(f, "ucp_rtt_rounds_us", r->rtt_us[PT2PT_UCP], info->rounds);
    fprintf(f,
            ",\"iters\":%d,\"warmup\":%d,\"rounds\":%d,\"wait\":\"%s\","
            "\"transport\":\"%s\",\"ucx_tls\":\"%s\"}\n",
            r->iters, r->warmup, info->rounds, info->wait, info->transport,
            info->tls);
}
