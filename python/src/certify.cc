// denote.check_certificate (docs/CERTIFICATES.md, docs/PYTHON.md): an unsat answer's certificate
// (denote.verify(..., certificate=True)) re-validated by the separate checker.
#include <chrono>

#include "common.h"
#include "interrupt.h"

#include "denote/base/deadline.h"
#include "denote/base/file.h"
#include "denote/certify/certificate.h"
#include "denote/verify/verify.h"

namespace denote::python {

namespace {

// VNN-LIB text itself or a file's path, as verify takes it.
VnnProperty read_property(const std::string& vnnlib) {
  const bool text = vnnlib.find("(declare-const") != std::string::npos || vnnlib.find("(assert") != std::string::npos;
  return unwrap(text ? parse_vnnlib(vnnlib, "<vnnlib text>") : load_vnnlib_file(vnnlib), /*parsing=*/true);
}

py::dict check_certificate(const PyModel& self, const std::string& vnnlib, const std::string& certificate, double timeout,
                           const std::string& arith) {
  if (!(timeout >= 0)) raise_invalid("timeout: expected seconds >= 0 (0: no limit)", "timeout");
  if (arith != "real" && arith != "f32") raise_invalid("arith " + arith + ": expected real or f32", "arith");
  const VnnProperty prop = read_property(vnnlib);
  const size_t first = certificate.find_first_not_of(" \t\r\n");
  const bool text = first != std::string::npos && certificate[first] == '{';
  std::string body = text ? certificate : unwrap(read_file_bounded(certificate, uint64_t{4} << 30));
  const certify::Certificate cert = unwrap(certify::parse_certificate(body, text ? "<certificate>" : certificate), true);
  certify::CheckOptions o;
  o.f32 = arith == "f32";
  if (timeout > 0) o.deadline = deadline_after(std::chrono::steady_clock::now(), timeout);
  const certify::CheckReport r = unwrap(run_interruptible(
      [&] { return certify::check_certificate(self.model(), certificate_property(prop), cert, o); }));
  py::dict d;
  d["valid"] = r.valid;
  d["failure"] = r.failure;
  d["jobs"] = r.jobs, d["leaves"] = r.leaves, d["splits"] = r.splits;
  d["time_s"] = r.seconds;
  return d;
}

}  // namespace

void register_certify(py::module_& m) {
  m.def("check_certificate", &check_certificate, py::arg("model"), py::arg("vnnlib"), py::arg("certificate"),
        py::arg("timeout") = 0.0, py::arg("arith") = "real",
        R"doc(Re-validates an unsat answer's certificate with the separate checker (docs/CERTIFICATES.md):
{'valid': bool, 'failure': str ('' when valid: else the first job, tree node and field that fails), 'jobs',
'leaves', 'splits', 'time_s'}. vnnlib: a VNN-LIB file or its text; certificate: the JSON text
(verify(..., certificate=True)['certificate']) or a file's path. A model with an op the checker does not cover,
or a malformed certificate, raises (naming the node or the JSON path). timeout: seconds (0: none). arith: "real"
(the exact network) or "f32" (its f32 evaluation too: a-priori error bounds of every f32 operation).)doc");
}

}  // namespace denote::python
