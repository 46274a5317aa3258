#include "denote/base/status.h"

namespace denote {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidInput: return "invalid_input";
    case ErrorCode::kStructure: return "structure";
    case ErrorCode::kShape: return "shape";
    case ErrorCode::kEval: return "eval";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kResource: return "resource";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace denote
