// The allowed range of a number and the one wording of its refusal,
//   "<where>: <value> is outside <range> (<what>)",
// shared by the layers' configuration keys (sim/cell_family.hpp) and the families' parameter
// checks (models/shared/parameter_checks.hpp), so a value is refused in the same words, against
// the same bounds, whichever way it arrives.
#pragma once

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

namespace egret {

struct ValueRange {
  double minimum = -std::numeric_limits<double>::infinity();
  double maximum = std::numeric_limits<double>::infinity();  // inclusive when finite
  bool minimum_exclusive = false;  // (minimum, ...: a slope or a share that must be > 0
  bool infinity_allowed = false;   // +inf accepted (a window held for ever)
  bool zero_allowed = false;       // 0 accepted besides the range (0: a value derived from others)

  bool contains(double v) const {
    if (v == 0 && zero_allowed) return true;
    if (std::isinf(v) && v > 0) return infinity_allowed;
    if (!std::isfinite(v)) return false;
    return (minimum_exclusive ? v > minimum : v >= minimum) && v <= maximum;
  }

  // "[0.001, inf)", "(0, 1]", "[0, 1e+12] or inf", "0 or [0.001, inf)".
  std::string text() const {
    std::ostringstream os;
    if (zero_allowed) os << "0 or ";
    os << (minimum_exclusive ? "(" : "[") << minimum << ", ";
    if (std::isinf(maximum))
      os << "inf" << (infinity_allowed ? "]" : ")");
    else
      os << maximum << "]" << (infinity_allowed ? " or inf" : "");
    return os.str();
  }
};

// The refusal of `value` at `where` (a file and key path, or a layer and parameter); `what`, if
// given, says what the value means and its unit.
inline std::string outside_range(const std::string& where, double value, const ValueRange& range,
                                 const std::string& what = "") {
  std::ostringstream os;
  os << where << ": " << value << " is outside " << range.text();
  if (!what.empty()) os << " (" << what << ")";
  return os.str();
}

}  // namespace egret
