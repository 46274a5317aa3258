// denote check-certificate MODEL PROP.vnnlib CERT.json [--timeout S] [--json]: re-validates an unsat
// answer's certificate (`denote verify ... --certificate CERT.json`) with the separate checker
// (include/denote/certify/certificate.h, docs/CERTIFICATES.md). Exit 0: valid; 1: invalid, or the model,
// property or certificate could not be read; 2: usage.
#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "denote/base/deadline.h"
#include "denote/base/file.h"
#include "denote/certify/certificate.h"
#include "verify_cli.h"

namespace denote::cli {

namespace {

struct CertOptions {
  std::string model, property, certificate;
  double timeout_s = 0;  // 0: none
  std::string arith = "real";  // real, or f32: the f32 evaluation too
  bool json = false;
};

constexpr uint64_t kMaxCertificateBytes = uint64_t{4} << 30;

int check_certificate_cmd(const CertOptions& o) {
  const auto deadline = o.timeout_s > 0 ? deadline_after(std::chrono::steady_clock::now(), o.timeout_s)
                                        : std::chrono::steady_clock::time_point::max();
  auto in = load_instance(o.model, o.property, deadline);
  if (!in.ok()) return fail(in.message());
  auto text = read_file_bounded(o.certificate, kMaxCertificateBytes);
  if (!text.ok()) return fail(text.message());
  auto cert = certify::parse_certificate(*text, o.certificate);
  if (!cert.ok()) return fail(cert.message());
  certify::CheckOptions co;
  co.deadline = deadline;
  co.f32 = o.arith == "f32";
  auto rep = certify::check_certificate(in->model, certificate_property(in->property), *cert, co);
  if (!rep.ok()) return fail(rep.message());
  if (o.json) {
    nlohmann::ordered_json j;
    j["valid"] = rep->valid;
    j["failure"] = rep->failure;
    j["jobs"] = rep->jobs;
    j["leaves"] = rep->leaves;
    j["splits"] = rep->splits;
    j["time_s"] = rep->seconds;
    std::cout << j.dump() << "\n";
  } else if (rep->valid) {
    std::cout << fmt::format("valid: {} job{}, {} leaves, {} splits, checked in {:.3f} s\n", rep->jobs,
                             rep->jobs == 1 ? "" : "s", rep->leaves, rep->splits, rep->seconds);
  } else {
    std::cout << "invalid: " << rep->failure << "\n";
  }
  std::cout.flush();
  if (!std::cout) return fail("cannot write the result to standard output");
  return rep->valid ? kExitOk : kExitInvalid;
}

}  // namespace

void add_check_certificate(CLI::App& app, Command& cmd) {
  auto o = std::make_shared<CertOptions>();
  auto* sub = app.add_subcommand("check-certificate",
                                 "re-validate an unsat certificate in exact-error-bounded arithmetic (exit 0 valid, 1 invalid)");
  sub->add_option("model", o->model, "model file (.onnx or .json)")->required();
  sub->add_option("property", o->property, "VNN-LIB property file")->required();
  sub->add_option("certificate", o->certificate, "certificate file (denote verify --certificate)")->required();
  sub->add_option("--timeout", o->timeout_s, "seconds for the check (0: no limit)")->capture_default_str();
  sub->add_option("--arith", o->arith, "real (the exact network) or f32 (its f32 evaluation too)")->capture_default_str();
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([&cmd, o] {
    cmd.run = [o] {
      if (!(o->timeout_s >= 0)) return usage_error(fmt::format("--timeout {}: expected seconds >= 0", o->timeout_s));
      if (o->arith != "real" && o->arith != "f32") return usage_error("--arith " + o->arith + ": expected real or f32");
      return check_certificate_cmd(*o);
    };
  });
}

}  // namespace denote::cli
