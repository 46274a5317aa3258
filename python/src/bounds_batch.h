// Model.bounds on a batch (auto_LiRPA's leading batch axis; python/src/bounds_batch.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "common.h"
#include "denote/bounds/crown.h"

namespace denote::python {

// A shape without its leading 1 (auto_LiRPA's batch dimension), or the shape itself: a sample's shape.
Shape drop_leading_one(const Shape& s);

// N when `lo` holds N samples of the model's one input along a new leading axis: lo is [N, *sample], the
// sample being the input's shape without its leading 1 (auto_LiRPA's batch dimension), or the whole shape;
// nullopt otherwise (lo is one sample: the single path applies).
std::optional<int64_t> batch_size(const Model& m, const py::object& lo);

// The bounds of every sample with one model prepared once: boxes [lo_i, hi_i], or balls lo_i +- eps_i (eps a
// number or one per sample; with p = 2 or 1 CROWN bounds each sample's L2 / L1 ball itself, sample_balls);
// C [rows, outputs] for all, or [N, rows, outputs] one per sample. Returns
// (lower, upper) shaped [N, *output sample] (the output's shape without its leading 1), or [N, rows] with C.
// Each sample's bounds are those of its own call; `ibp_box` (method ibp without C): IBP's output box, the
// batch as one pass (run_ibp_batch). With `all_nodes` (and no C): {node: (lo, hi)}, each [N, *node shape
// without its leading 1].
py::object batch_bounds(const PyModel& self, const py::object& lo, const py::object& hi, const py::object& eps,
                        const py::object& spec, const CrownOptions& co, bool ibp_box, int64_t n,
                        double p = INFINITY, bool all_nodes = false);
// An L2 / L1 ball per sample of x ([N, *sample]) with radius eps (one number or one per sample), for CROWN
// (Subdomain::ball).
std::vector<std::shared_ptr<const InputBall>> sample_balls(const Tensor<double>& x, const py::object& eps,
                                                          const Shape& in, int64_t n, double p);

// The model prepared for IBP in `arith`, built on the first call and kept in self (its graph and payload
// do not change).
IbpPrepared prepared_for(const PyModel& self, const ArithSpec& arith);

// The batch's boxes: [lo_i, hi_i], or lo_i +- eps_i (eps one number or one per sample); x is lo as a tensor
// [N, *sample], `in` the model's input shape.
std::vector<DoubleBox> sample_boxes(const Tensor<double>& x, const py::object& hi, const py::object& eps,
                                    const Shape& in, int64_t n);
// C for every sample: [rows, outputs] shared, or [N, rows, outputs] (empty without C).
std::vector<SpecMatrix> sample_specs(const py::object& spec, int64_t n, int64_t ny);

// A UserWarning naming the nodes CROWN took at their IBP box (CrownResult::cut): the bounds hold, but are
// only as tight as IBP's there, which an auto_LiRPA user would otherwise not see; and one when CROWN's error
// model does not hold and the bounds are IBP's (CrownResult::fallback).
void warn_cut(const Model& m, const std::vector<CrownResult>& runs);

}  // namespace denote::python
