// Process-wide malloc settings for throughput. denote's evaluators, gradients and bounds allocate
// tensors of hundreds of kilobytes to megabytes per node and free them within the same call; with
// glibc's defaults such blocks are mmap'ed and unmapped each time (or the heap top is trimmed and
// regrown), so every call pays page faults and kernel zeroing: 30% of a batch-1024 ACAS Xu
// gradient with OpenBLAS (3.06 against 2.10 ms, docs/PERF.md "Gradients: the allocator").
//
//   denote::tune_allocator_for_throughput();   // once, at the start of main()
//
// It raises glibc's mmap threshold to 32 MiB (glibc's own upper limit for its dynamic threshold)
// and the trim threshold to 128 MiB, so freed blocks stay in the heap for the next call; the cost
// is up to 128 MiB of freed memory kept mapped. The denote CLI and the benchmarks call it; the
// library never does by itself (it would change the allocator of the process that links it, e.g.
// Python's). Returns false where it does nothing (not glibc, or mallopt refused, as under ASan).
#pragma once

namespace denote {

bool tune_allocator_for_throughput();
// Whether tune_allocator_for_throughput took effect in this process. Pools that keep freed buffers
// (the CROWN engines' large coefficient buffers, src/bounds/crown_state.h) only pay under it: with
// glibc's dynamic threshold, blocks that are never freed keep the threshold low and every other
// megabyte block is mapped afresh.
bool allocator_tuned();

}  // namespace denote
