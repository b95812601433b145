#include "client/api_error.h"

namespace tuneplane::client {

bool ApiError::transient() const {
  switch (kind) {
    case FailureKind::kNotSent:
    case FailureKind::kNoAnswer:
      return true;
    case FailureKind::kHttp:
      return http_status == 429 || http_status == 502 || http_status == 503 || http_status == 504;
    case FailureKind::kBadResponse:
      return false;
  }
  return false;
}

}  // namespace tuneplane::client
