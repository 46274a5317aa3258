// The `denote._denote` extension module: registration of every binding file (docs/PYTHON.md).
#include "common.h"

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
}
