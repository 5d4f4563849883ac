/* Linpack microservice: solve a dense N x N system A x = b by LU factorisation with
 * partial pivoting (LAPACK dgesv from OpenBLAS) and report GFLOPS with HPL's flop
 * count (2/3 N^3 + 3/2 N^2) and HPL's scaled-residual check.
 * A is generated from a counter-based hash so the residual check can regenerate it
 * instead of keeping a second copy: the memory footprint stays at one N x N matrix. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* OpenBLAS: the threads its BLAS calls use (OPENBLAS_NUM_THREADS, else one per CPU of the affinity mask). */
int openblas_get_num_threads(void);
char *openblas_get_corename(void);

extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv,
                   double *b, const int *ldb, int *info);

/* Entry (i, j) of the system; column n holds b. Uniform in [-0.5, 0.5). */
static double entry(uint64_t i, uint64_t j, uint64_t n) {
    uint64_t z = i * (n + 1) + j + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n < 1) { fprintf(stderr, "linpack: N must be positive\n"); return 2; }
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *x = malloc((size_t)n * sizeof *x);
    int *ipiv = malloc((size_t)n * sizeof *ipiv);
    if (!a || !x || !ipiv) { fprintf(stderr, "linpack: out of memory for N=%d\n", n); return 3; }
    for (size_t j = 0; j < (size_t)n; j++)        /* column-major, as LAPACK wants */
        for (size_t i = 0; i < (size_t)n; i++) a[i + j * n] = entry(i, j, n);
    for (int i = 0; i < n; i++) x[i] = entry(i, n, n);

    int nrhs = 1, info = 0;
    double t0 = seconds();
    dgesv_(&n, &nrhs, a, &n, ipiv, x, &n, &info);
    double elapsed = seconds() - t0;
    if (info != 0) { fprintf(stderr, "linpack: dgesv info=%d\n", info); return 4; }

    /* r = A x - b with A regenerated; infinity norms for HPL's scaled residual. */
    double *r = calloc((size_t)n, sizeof *r), *row_sum = calloc((size_t)n, sizeof *row_sum);
    if (!r || !row_sum) { fprintf(stderr, "linpack: out of memory for residual\n"); return 3; }
    double norm_x = 0, norm_b = 0, norm_a = 0, norm_r = 0;
    for (size_t j = 0; j < (size_t)n; j++) {
        for (size_t i = 0; i < (size_t)n; i++) {
            double aij = entry(i, j, n);
            r[i] += aij * x[j];
            row_sum[i] += fabs(aij);
        }
        norm_x = fmax(norm_x, fabs(x[j]));
    }
    for (int i = 0; i < n; i++) {
        double bi = entry(i, n, n);
        norm_r = fmax(norm_r, fabs(r[i] - bi));
        norm_b = fmax(norm_b, fabs(bi));
        norm_a = fmax(norm_a, row_sum[i]);
    }
    double scaled = norm_r / (DBL_EPSILON * (norm_a * norm_x + norm_b) * n);
    double flops = 2.0 / 3.0 * (double)n * n * n + 1.5 * (double)n * n;

    printf("linpack n=%d\n", n);
    printf("threads=%d\n", openblas_get_num_threads());
    printf("core=%s\n", openblas_get_corename());
    printf("time_s=%.6f\n", elapsed);
    printf("gflops=%.4f\n", flops / elapsed / 1e9);
    printf("residual=%.6e\n", norm_r);
    printf("scaled_residual=%.6f\n", scaled);
    printf("check=%s\n", scaled < 16.0 ? "PASSED" : "FAILED");
    return scaled < 16.0 ? 0 : 5;
}
