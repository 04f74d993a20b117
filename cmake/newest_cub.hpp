// For the one translation unit of a step that sees the newest CCCL (cmake/NewestCccl.cmake gives only
// that file its include path, so two CUB versions never meet in one file): include it after a CUB
// header. It stops the build when the include path reached an older CCCL first, and names the version.
#pragma once

#include <cstdio>

#if !defined(CCCL_MAJOR_VERSION) || CCCL_MAJOR_VERSION < 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION < 5)
#error "the newest-CUB comparison needs CCCL 3.5 or newer: the include path reached another CCCL first"
#endif

namespace reduce {

// "3.5.0": the CCCL this file was compiled against.
inline const char* newest_cccl_version() {
  static char text[32];
  std::snprintf(text, sizeof text, "%d.%d.%d", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  return text;
}

}  // namespace reduce
