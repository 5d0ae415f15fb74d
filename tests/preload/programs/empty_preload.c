/* An empty preloadable library: what LD_PRELOAD costs by itself. */
int chakra_bench_empty_preload(void) { return 0; }
