// 13_segmented's rivals as the engine times and checks them (reduce::Rival): the toolkit's
// cub::DeviceSegmentedReduce::Sum on the offsets, then CUB 3.5's fixed-size overload (every segment of one
// length, `equal_length` > 0) and its offsets overload, absent without a CCCL 3.5 (-DCCCL_DIR), with why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cub35.hpp"
#include "harness.cuh"
#include "segmented.cuh"

namespace step13 {

inline std::vector<reduce::Rival<float>> rivals(const std::int64_t* offsets, std::int64_t first, std::int64_t segments,
                                                std::int64_t equal_length) {
  const std::string absent35 = cub35::available() ? "" : cub35::why_absent();
  return {{"cub", [=](std::int64_t) { return cub_scratch_bytes(segments); },
           [=](const float* in, std::int64_t, float* out, reduce::Scratch s, cudaStream_t st) {
             return launch_cub(in, offsets, segments, out, s, st);
           },
           segments},
          {"cub35_fixed", [=](std::int64_t) { return cub35::scratch_bytes(segments, equal_length); },
           [=](const float* in, std::int64_t, float* out, reduce::Scratch s, cudaStream_t st) {
             return cub35::sum_fixed(in + first, segments, equal_length, out, s.data, s.bytes, st);
           },
           segments, equal_length > 0 ? absent35 : "segments of more than one length"},
          {"cub35",
           [=](std::int64_t) { return cub35::scratch_bytes(segments, 0); },
           [=](const float* in, std::int64_t, float* out, reduce::Scratch s, cudaStream_t st) {
             return cub35::sum(in, offsets, segments, out, s.data, s.bytes, st);
           },
           segments,
           absent35,
           {reduce::text_field("cub35_version", absent35.empty() ? cub35::cccl_version() : "")}}};
}

}  // namespace step13
