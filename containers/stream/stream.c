/* STREAM-rules memory bandwidth kernel: Copy, Scale, Add, Triad over three arrays of
 * ARRAY_ELEMENTS doubles (sized well above the last-level cache), NTIMES passes, the
 * first pass discarded as warm-up, best rate reported in MB/s (1 MB = 1e6 bytes), and
 * the array contents checked against the same arithmetic done on scalars. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int ntimes = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 1 || ntimes < 2) { fprintf(stderr, "stream: need N >= 1 and NTIMES >= 2\n"); return 2; }
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) { fprintf(stderr, "stream: out of memory for N=%ld\n", n); return 3; }
    const double scalar = 3.0;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
#pragma omp parallel for
    for (long j = 0; j < n; j++) { a[j] = 1.0; b[j] = 2.0; c[j] = 0.0; }

    const char *names[4] = {"copy", "scale", "add", "triad"};
    const double bytes[4] = {2.0 * sizeof(double) * n, 2.0 * sizeof(double) * n,
                             3.0 * sizeof(double) * n, 3.0 * sizeof(double) * n};
    double tmin[4] = {INFINITY, INFINITY, INFINITY, INFINITY}, tmax[4] = {0}, tsum[4] = {0};
    for (int k = 0; k < ntimes; k++) {
        double t[4];
        t[0] = seconds();
#pragma omp parallel for
        for (long j = 0; j < n; j++) c[j] = a[j];
        t[0] = seconds() - t[0];
        t[1] = seconds();
#pragma omp parallel for
        for (long j = 0; j < n; j++) b[j] = scalar * c[j];
        t[1] = seconds() - t[1];
        t[2] = seconds();
#pragma omp parallel for
        for (long j = 0; j < n; j++) c[j] = a[j] + b[j];
        t[2] = seconds() - t[2];
        t[3] = seconds();
#pragma omp parallel for
        for (long j = 0; j < n; j++) a[j] = b[j] + scalar * c[j];
        t[3] = seconds() - t[3];
        if (k == 0) continue; /* warm-up pass */
        for (int f = 0; f < 4; f++) {
            tsum[f] += t[f];
            tmin[f] = fmin(tmin[f], t[f]);
            tmax[f] = fmax(tmax[f], t[f]);
        }
    }

    /* Expected values: the same sequence of operations on one element. */
    double ea = 1.0, eb = 2.0, ec = 0.0;
    for (int k = 0; k < ntimes; k++) { ec = ea; eb = scalar * ec; ec = ea + eb; ea = eb + scalar * ec; }
    double err_a = 0, err_b = 0, err_c = 0;
#pragma omp parallel for reduction(+ : err_a, err_b, err_c)
    for (long j = 0; j < n; j++) {
        err_a += fabs(a[j] - ea); err_b += fabs(b[j] - eb); err_c += fabs(c[j] - ec);
    }
    const double eps = 1e-13;
    int valid = err_a / n / fabs(ea) < eps && err_b / n / fabs(eb) < eps && err_c / n / fabs(ec) < eps;

    printf("stream array_elements=%ld ntimes=%d threads=%d array_mib=%.1f\n", n, ntimes, threads,
           n * sizeof(double) / 1048576.0);
    printf("function\tbest_rate_mb_s\tavg_time_s\tmin_time_s\tmax_time_s\n");
    for (int f = 0; f < 4; f++)
        printf("%s\t%.1f\t%.6f\t%.6f\t%.6f\n", names[f], bytes[f] / tmin[f] / 1e6,
               tsum[f] / (ntimes - 1), tmin[f], tmax[f]);
    printf("validation=%s\n", valid ? "PASSED" : "FAILED");
    return valid ? 0 : 5;
}
