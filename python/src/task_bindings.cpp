// Python bindings of the task generators: the delay-copy task (train/delay_copy_task.hpp) as a
// list of egret.Sample with their targets, the same trials `egret train` uses for a seed.
#include <pybind11/stl.h>

#include "python/src/bindings.hpp"
#include "python/src/sample.hpp"
#include "train/delay_copy_task.hpp"

namespace egret::python {

void bind_tasks(py::module_& m) {
  m.def(
      "delay_copy_trials",
      [](int trials, std::uint64_t seed, int bits, double delay_min, double delay_max,
         double recall_begin, double recall_end, bool quiet_window, double quiet_begin,
         double quiet_end, double onset_min, double onset_max, double jitter, double tail) {
        if (trials <= 0) throw std::invalid_argument("delay_copy_trials: trials must be > 0");
        DelayCopyConfig c;
        c.bits = bits;
        c.onset_min = onset_min;
        c.onset_max = onset_max;
        c.jitter = jitter;
        c.tail = tail;
        c.delay_min = delay_min;
        c.delay_max = delay_max;
        c.recall_begin = recall_begin;
        c.recall_end = recall_end;
        c.quiet_window = quiet_window;
        c.quiet_begin = quiet_begin;
        c.quiet_end = quiet_end;
        std::vector<PySample> out;
        for (auto& s : delay_copy_trials<double>(c, trials, seed)) {
          PySample p;
          p.s = std::move(s);
          p.has_values = true;
          out.push_back(std::move(p));
        }
        return out;
      },
      py::arg("trials"), py::arg("seed"), py::kw_only(), py::arg("bits") = 2,
      py::arg("delay_min") = 30.0, py::arg("delay_max") = 40.0, py::arg("recall_begin") = 1.0,
      py::arg("recall_end") = 11.0, py::arg("quiet_window") = true, py::arg("quiet_begin") = -12.0,
      py::arg("quiet_end") = -2.0, py::arg("onset_min") = 1.0, py::arg("onset_max") = 3.0,
      py::arg("jitter") = 0.5, py::arg("tail") = 1.0,
      "Delay-copy trials (EGRU paper, Sec. 4.1): a bit pattern, a delay, a recall cue; window "
      "readouts (quiet window before the cue with target 0, recall window with the pattern) and "
      "binary targets. The same trials as `egret train` for the same seed and settings.");
}

}  // namespace egret::python
