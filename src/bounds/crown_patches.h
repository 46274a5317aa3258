// Internal: windowed rows for the intermediate bounds of a conv node or a residual join (auto_LiRPA's
// "patches" mode).
// The start rows of a conv node's intermediate bounds are +-e_o: row o's coefficients on the conv's
// input are its kernel, nonzero in one window of the image only, and going back through relus (or any
// elementwise relaxation) and further convs they stay in a window that grows by the kernel at each
// conv. Kept as [C, PH, PW] per row with the window's origin in the node's image (which may stick out
// of it: the entries there multiply a conv's zero padding and are dropped), a pass costs the window's
// size per row instead of the image's: for a CIFAR conv(k4, s2) after a conv(k4, s2), 300 of 3,072
// input coefficients and about 1/16 of the products.
//
// Every step adds exactly the terms the dense rules add for the window's entries (relaxation lines
// and their error terms, the conv's bias, its coefficient rounding bound gamma(Cout_g + k_vol + 2)
// and evaluation error scale, the underflow term), so the bounds equal the dense pass's up to the
// order of the sums (tests/unit/crown_patches_test.cc).
#pragma once

#include <cstdint>

#include "bounds/crown_rules.h"

namespace denote::crown {

// A backward pass's prefix on windowed rows, for a pass that starts at a conv node over a 2-d image
// (one image: the dims before the channel are 1) whose rows are unit rows (PassRows::unit), or at a
// residual join (add / sub of two images, a resnet block's relu input: one-pixel windows handed to
// both branches, and merged where the branches meet again). It goes
// back through single-use relus (any op with elementwise lines), 2-d convs and same-order ops while
// the windows stay smaller than half the image, and ends at the input (concretised as the fused
// input rule does), at the start's parent when one_step (concretised at its box), or by expanding
// the rows to dense coefficients at the first node it does not handle (PassRows::A there; the
// generic walk goes on from it). Returns false, with nothing changed, when the start does not
// qualify (the caller runs the dense rules); true when it ran (the start's coefficients are then
// unused).
bool patch_prefix(RuleCtx& c, int64_t start, bool one_step);

}  // namespace denote::crown
