// A 2-D conv's config for the tests' small CNNs: channels at axis 1 (NCHW), a k x k kernel, the same
// stride and padding on both spatial axes (before and after), dilation 1, one group.
#pragma once

#include <cstdint>

#include "denote/ir/attrs.h"

namespace denote {

inline ConvConfig conv2d_config(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t pad) {
  ConvConfig c;
  c.window = WindowConfig{2, {k, k}, {stride, stride}, {pad, pad}};
  c.padding_after = {pad, pad};
  c.dilation = {1, 1};
  c.groups = 1;
  c.channel_axis = 1;
  c.in_channels = cin;
  c.out_channels = cout;
  return c;
}

}  // namespace denote
