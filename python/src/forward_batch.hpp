// egret.ForwardBatch: a batch's forward pass with its adjoint tapes, kept for one backward pass
// later, given dL/d(readout traces) or dL/d(logits) from outside (what egret.torch builds on).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "adjoint/reverse_sweep.hpp"
#include "python/src/numpy_conversions.hpp"
#include "python/src/regularizers.hpp"
#include "python/src/result_dicts.hpp"
#include "python/src/sample_batch.hpp"
#include "train/batch_gradient.hpp"

namespace egret::python {

// A (B, R, width) array from per-sample readout vectors (trace or logits).
template <class Scalar, class Get>
py::array_t<double> stack_readouts(const std::vector<SimResult<Scalar>>& results, Index width,
                                   const Get& get) {
  const auto b = static_cast<py::ssize_t>(results.size());
  const auto r = static_cast<py::ssize_t>(results.empty() ? 0 : results[0].readouts.size());
  py::array_t<double> a({b, r, static_cast<py::ssize_t>(width)});
  auto m = a.mutable_unchecked<3>();
  for (py::ssize_t i = 0; i < b; ++i)
    for (py::ssize_t j = 0; j < r; ++j) {
      const auto& v =
          get(results[static_cast<std::size_t>(i)].readouts[static_cast<std::size_t>(j)]);
      for (py::ssize_t k = 0; k < static_cast<py::ssize_t>(width); ++k)
        m(i, j, k) = v[static_cast<std::size_t>(k)];
    }
  return a;
}

// The inverse: a (b, r, width) float64 array as per-sample readout vectors, every entry finite
// and representable in Scalar.
template <class Scalar>
std::vector<std::vector<std::vector<Scalar>>> unstack(const py::handle& obj, std::size_t b,
                                                      std::size_t r, Index width,
                                                      const std::string& name) {
  const F64 a = py::cast<F64>(obj);
  if (a.ndim() != 3 || static_cast<std::size_t>(a.shape(0)) != b ||
      static_cast<std::size_t>(a.shape(1)) != r || a.shape(2) != width)
    throw std::invalid_argument(name + ": expected shape (" + std::to_string(b) + ", " +
                                std::to_string(r) + ", " + std::to_string(width) + ")");
  std::vector<std::vector<std::vector<Scalar>>> out(b);
  const double* d = a.data();
  for (std::size_t i = 0; i < b; ++i) {
    out[i].resize(r);
    for (std::size_t j = 0; j < r; ++j) {
      for (const double* v = d; v != d + width; ++v) {
        if (!std::isfinite(*v)) throw std::invalid_argument(name + ": NaN or infinite entry");
        out[i][j].push_back(narrow_checked<Scalar>(*v, name));
      }
      d += width;
    }
  }
  return out;
}

template <class Scalar>
class ForwardBatchOf {
 public:
  ForwardBatchOf(Network<Scalar> net, std::vector<SimResult<Scalar>> results,
                 std::vector<Tape<Scalar>> tapes, int threads)
      : net_(std::move(net)),
        results_(std::move(results)),
        tapes_(std::move(tapes)),
        threads_(threads) {}
  ForwardBatchOf(const ForwardBatchOf&) = delete;
  ForwardBatchOf(ForwardBatchOf&&) = default;
  ForwardBatchOf& operator=(const ForwardBatchOf&) = delete;
  ForwardBatchOf& operator=(ForwardBatchOf&&) = default;

  Index readout_width() const { return net_.layer(net_.size() - 1).units(); }
  py::array_t<double> traces() const {
    return stack_readouts(
        results_, readout_width(),
        [](const ReadoutRecord<Scalar>& r) -> const std::vector<Scalar>& { return r.trace; });
  }
  py::object logits() const {
    if (!net_.readout()) return py::none();
    return stack_readouts(
        results_, net_.readout()->classes(),
        [](const ReadoutRecord<Scalar>& r) -> const std::vector<Scalar>& { return r.logits; });
  }
  py::list results() const {
    py::list out;
    for (const auto& r : results_) out.append(result_to_dict(r));
    return out;
  }
  // Per layer, the batch's mean events per unit per second and ActivationSparsity: what
  // EventNetwork.activity reports each forward pass, without converting the emitted events.
  py::dict activity() const {
    std::vector<double> rate, sparsity;
    for (std::size_t k = 0; !results_.empty() && k < results_[0].layers.size(); ++k) {
      double r_sum = 0, s_sum = 0;
      for (const auto& r : results_) {
        r_sum += r.rate_per_unit(k);
        for (const auto& [name, value] :
             egret::layer_metrics(r.layers[k], 1, static_cast<double>(r.end_time), sizeof(Scalar)))
          if (name == "ActivationSparsity") s_sum += value;
      }
      rate.push_back(r_sum / static_cast<double>(results_.size()));
      sparsity.push_back(s_sum / static_cast<double>(results_.size()));
    }
    py::dict out;
    out["events_per_unit_per_s"] = py::cast(rate);
    out["activation_sparsity"] = py::cast(sparsity);
    return out;
  }

  // The regularisers' mean over the batch (adjoint/state_regularizer.hpp,
  // adjoint/activity_regularizer.hpp), and their gradient kept for backward(). The state term is
  // computed by a backward sweep with no upstream adjoint: the sweep is linear in its sources, so
  // backward() adds d_regularization times this gradient to the loss's.
  double regularization(const py::object& state_regularizer,
                        const py::object& activity_regularizer) {
    const StateRegularizer state = state_regularizer_from(state_regularizer);
    const ActivityRegularizer activity = activity_regularizer_from(activity_regularizer);
    const std::size_t b = results_.size();
    std::vector<double> values(b, 0.0);
    {
      py::gil_scoped_release release;
      regularization_grad_ = summed_backward_sweeps(
          net_, b, threads_, NonFiniteSamples::kRefuse, [&](std::size_t i, Gradient<Scalar>& grad) {
            const auto act = activity_term(net_, tapes_[i], results_[i].end_time, activity);
            const std::vector<std::vector<Scalar>> no_upstream(
                results_[i].readouts.size(), std::vector<Scalar>(readout_width(), Scalar(0)));
            const BackwardReport report =
                reverse_sweep(net_, tapes_[i], results_[i], no_upstream, grad, &act, false, state);
            values[i] = static_cast<double>(act.value) + report.state_cost;
            return report;
          });
    }
    double mean = 0;
    for (double v : values) mean += v;
    regularization_grad_ *= Scalar(1) / static_cast<Scalar>(b);
    has_regularization_ = true;
    return mean / static_cast<double>(b);
  }

  // Gradients summed over the batch, given dL/d(readout traces) or dL/d(logits), (B, R, ·), plus
  // d_regularization times the regularisers' gradient (regularization()). A sample with
  // non-finite values in its backward pass is an error (NonFiniteSamples::kRefuse).
  py::dict backward(const py::object& d_traces, const py::object& d_logits,
                    double d_regularization) {
    if (d_traces.is_none() == d_logits.is_none())
      throw std::invalid_argument("backward: give exactly one of d_traces and d_logits");
    const std::size_t b = results_.size(), r = results_.empty() ? 0 : results_[0].readouts.size();
    const bool via_logits = !d_logits.is_none();
    if (via_logits && !net_.readout())
      throw std::invalid_argument("backward: d_logits given but the network has no readout");
    const auto upstream =
        via_logits
            ? unstack<Scalar>(d_logits, b, r, net_.readout()->classes(), "backward: d_logits")
            : unstack<Scalar>(d_traces, b, r, readout_width(), "backward: d_traces");
    Gradient<Scalar> sum;
    {
      py::gil_scoped_release release;
      sum = summed_backward_sweeps(
          net_, b, threads_, NonFiniteSamples::kRefuse, [&](std::size_t i, Gradient<Scalar>& grad) {
            const auto d_o =
                via_logits ? readout_backward(net_, results_[i], upstream[i], grad) : upstream[i];
            return reverse_sweep(net_, tapes_[i], results_[i], d_o, grad,
                                 static_cast<const ActivityTerm<Scalar>*>(nullptr),
                                 /*input_time_adjoints=*/false);  // merged tape (forward())
          });
    }
    if (d_regularization != 0) {
      if (!has_regularization_)
        throw std::invalid_argument(
            "backward: d_regularization given but regularization() was not computed");
      Gradient<Scalar> scaled = regularization_grad_;
      scaled *= static_cast<Scalar>(d_regularization);
      sum += scaled;
    }
    return gradient_to_dict(sum, via_logits);
  }

  std::size_t size() const { return results_.size(); }

 private:
  Network<Scalar> net_;
  std::vector<SimResult<Scalar>> results_;
  std::vector<Tape<Scalar>> tapes_;
  int threads_ = 0;
  Gradient<Scalar> regularization_grad_;  // the mean regularisers' (regularization())
  bool has_regularization_ = false;
};

// The forward pass of a float or a double network.
class ForwardBatch {
 public:
  template <class Scalar>
  explicit ForwardBatch(ForwardBatchOf<Scalar> b) : batch_(std::move(b)) {}
  py::array_t<double> traces() const {
    return std::visit([](const auto& b) { return b.traces(); }, batch_);
  }
  py::object logits() const {
    return std::visit([](const auto& b) { return b.logits(); }, batch_);
  }
  py::list results() const {
    return std::visit([](const auto& b) { return b.results(); }, batch_);
  }
  py::dict activity() const {
    return std::visit([](const auto& b) { return b.activity(); }, batch_);
  }
  double regularization(const py::object& state, const py::object& activity) {
    return std::visit([&](auto& b) { return b.regularization(state, activity); }, batch_);
  }
  py::dict backward(const py::object& d_traces, const py::object& d_logits,
                    double d_regularization) {
    return std::visit([&](auto& b) { return b.backward(d_traces, d_logits, d_regularization); },
                      batch_);
  }
  std::size_t size() const {
    return std::visit([](const auto& b) { return b.size(); }, batch_);
  }

 private:
  std::variant<ForwardBatchOf<double>, ForwardBatchOf<float>> batch_;
};

}  // namespace egret::python
