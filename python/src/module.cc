// The `denote._denote` extension module: registration of every binding file (docs/PYTHON.md).
#include "common.h"

#include "denote/base/allocator.h"

#ifndef DENOTE_VERSION
#define DENOTE_VERSION "0.0.0"
#endif

PYBIND11_MODULE(_denote, m) {
  using namespace denote::python;
  m.doc() = "denote: one neural-network graph IR, checked, evaluated, bounded, verified and planned";
  m.attr("__version__") = DENOTE_VERSION;
  register_errors(m);
  register_model(m);
  register_builder(m);
  register_run(m, model_class());
  register_analysis(m, model_class());
  register_formats(m);
  register_mx(m);
  register_certify(m);
  m.def("tune_allocator", &denote::tune_allocator_for_throughput,
        R"doc(Opt-in: raises glibc's malloc mmap threshold (32 MiB) and trim threshold (128 MiB) for the whole
process, so the megabyte tensors of batched run/grad/bounds calls are reused from the heap instead of being
mapped and zeroed again on every call (docs/PERF.md, "Gradients: the allocator"). It affects every library
in the process (PyTorch's CPU tensors too) and keeps up to 128 MiB of freed memory; import denote never
does it by itself. Returns False where it does nothing (not glibc, or under ASan).)doc");
}
