// Python bindings of the EvNN-convention EGRU layer on dense sequences (what egret.torch.EGRU
// runs): evnn_egru_forward(...) -> (y, h, o, trace, tape) and tape.backward(...). Arrays are
// numpy views of torch's CPU tensors, float32 or float64 (all of one dtype), row-major; shapes
// and finiteness are checked, and the GIL is released while C++ runs.
#include <pybind11/numpy.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/evnn_egru/evnn_egru_sequence_adjoint.hpp"
#include "python/src/bindings.hpp"

namespace egret::python {
namespace {

namespace py = pybind11;

template <class Scalar>
using Arr = py::array_t<Scalar, py::array::c_style>;

// `obj` as a C-contiguous array of Scalar with the given shape (-1: any), without conversion:
// a dtype or layout mismatch is an error naming the argument.
template <class Scalar>
Arr<Scalar> typed(const py::handle& obj, const char* name, std::vector<py::ssize_t> shape,
                  bool check_finite) {
  if (!py::isinstance<Arr<Scalar>>(obj))
    throw std::invalid_argument(std::string("evnn_egru: ") + name + ": expected a C-contiguous " +
                                (sizeof(Scalar) == 4 ? "float32" : "float64") + " array");
  auto a = py::reinterpret_borrow<Arr<Scalar>>(obj);
  bool ok = a.ndim() == static_cast<py::ssize_t>(shape.size());
  for (std::size_t i = 0; ok && i < shape.size(); ++i)
    ok = shape[i] < 0 || a.shape(static_cast<py::ssize_t>(i)) == shape[i];
  if (!ok) {
    std::string want;
    for (auto s : shape) want += (want.empty() ? "" : ", ") + (s < 0 ? "*" : std::to_string(s));
    throw std::invalid_argument(std::string("evnn_egru: ") + name + ": expected shape (" + want +
                                ")");
  }
  if (check_finite)
    for (py::ssize_t i = 0; i < a.size(); ++i)
      if (!std::isfinite(a.data()[i]))
        throw std::invalid_argument(std::string("evnn_egru: ") + name +
                                    ": NaN or infinite entry at flat index " + std::to_string(i));
  return a;
}

template <class Scalar>
struct Weights {
  Arr<Scalar> kernel, recurrent_kernel, bias, recurrent_bias, thr;
  EvnnEgruWeights<Scalar> view;
  Weights(const py::handle& k, const py::handle& rk, const py::handle& b, const py::handle& rb,
          const py::handle& th, double dampening, double support) {
    kernel = typed<Scalar>(k, "kernel", {-1, -1}, true);
    const py::ssize_t n3 = kernel.shape(1), n = n3 / 3;
    if (n < 1 || n3 != 3 * n || kernel.shape(0) < 1)
      throw std::invalid_argument("evnn_egru: kernel: expected shape (input_size, 3 hidden_size)");
    recurrent_kernel = typed<Scalar>(rk, "recurrent_kernel", {n, n3}, true);
    bias = typed<Scalar>(b, "bias", {n3}, true);
    recurrent_bias = typed<Scalar>(rb, "recurrent_bias", {n3}, true);
    thr = typed<Scalar>(th, "thr", {n}, true);
    if (!(dampening >= 0) || !std::isfinite(dampening) || !(support > 0) || !std::isfinite(support))
      throw std::invalid_argument(
          "evnn_egru: dampening_factor must be finite and >= 0, pseudo_derivative_support "
          "finite and > 0");
    view = {kernel.data(),
            recurrent_kernel.data(),
            bias.data(),
            recurrent_bias.data(),
            thr.data(),
            kernel.shape(0),
            n,
            static_cast<Scalar>(dampening),
            static_cast<Scalar>(support)};
  }
};

// Freed buffers kept for the next call (a few, of any size): a forward pass's outputs and
// tape are megabytes, and memory freed and mapped again every call costs page faults on every
// call, more than the arithmetic. Thread-safe; arrays return their buffer when they die.
template <class T>
class Pool {
 public:
  static Pool& instance() {
    static Pool* pool = new Pool;  // never destroyed: arrays may die after static destruction
    return *pool;
  }
  T take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return T{};
    T t = std::move(free_.back());
    free_.pop_back();
    return t;
  }
  void give(T&& t) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < kKept) free_.push_back(std::move(t));
  }

 private:
  static constexpr std::size_t kKept = 16;
  std::mutex mutex_;
  std::vector<T> free_;
};

// A new array of the given shape on a pooled buffer, returned to the pool when the array dies.
template <class Scalar>
Arr<Scalar> pooled_array(std::vector<py::ssize_t> shape) {
  py::ssize_t size = 1;
  for (auto d : shape) size *= d;
  auto* buf = new std::vector<Scalar>(Pool<std::vector<Scalar>>::instance().take());
  buf->resize(static_cast<std::size_t>(size));
  py::capsule owner(buf, [](void* p) {
    auto* v = static_cast<std::vector<Scalar>*>(p);
    Pool<std::vector<Scalar>>::instance().give(std::move(*v));
    delete v;
  });
  return Arr<Scalar>(shape, buf->data(), owner);
}

// The forward pass's tape and arrays, kept for one backward pass; the tape's buffers go back
// to the pool afterwards.
template <class Scalar>
struct TapeOf {
  TapeOf() : tape(Pool<EvnnEgruTape<Scalar>>::instance().take()) {}
  TapeOf(const TapeOf&) = delete;
  TapeOf& operator=(const TapeOf&) = delete;
  ~TapeOf() { Pool<EvnnEgruTape<Scalar>>::instance().give(std::move(tape)); }
  EvnnEgruTape<Scalar> tape;
  Arr<Scalar> x;
  std::optional<Arr<Scalar>> y0, zoneout;
  Arr<Scalar> y, h;
};

class EvnnTape {
 public:
  template <class Scalar>
  explicit EvnnTape(std::shared_ptr<TapeOf<Scalar>> t) : tape_(std::move(t)) {}

  // Gradients of the inputs and parameters given the upstream gradients (None: zero).
  py::tuple backward(const py::object& kernel, const py::object& recurrent_kernel,
                     const py::object& bias, const py::object& recurrent_bias,
                     const py::object& thr, double dampening, double support, const py::object& d_y,
                     const py::object& d_h, const py::object& d_o, const py::object& d_trace,
                     bool want_x, bool want_y0, int threads) {
    return std::visit(
        [&](auto& t) {
          return run(*t, kernel, recurrent_kernel, bias, recurrent_bias, thr, dampening, support,
                     d_y, d_h, d_o, d_trace, want_x, want_y0, threads);
        },
        tape_);
  }

 private:
  template <class Scalar>
  static py::tuple run(const TapeOf<Scalar>& t, const py::object& k, const py::object& rk,
                       const py::object& b, const py::object& rb, const py::object& th,
                       double dampening, double support, const py::object& d_y,
                       const py::object& d_h, const py::object& d_o, const py::object& d_trace,
                       bool want_x, bool want_y0, int threads) {
    const Weights<Scalar> w(k, rk, b, rb, th, dampening, support);
    const py::ssize_t T = t.tape.steps, B = t.tape.batch, N = t.tape.units, C = t.tape.inputs;
    if (w.view.units != N || w.view.inputs != C)
      throw std::invalid_argument("evnn_egru backward: the weights' shapes changed since forward");
    auto upstream = [&](const py::object& g, const char* name) -> std::optional<Arr<Scalar>> {
      if (g.is_none()) return std::nullopt;
      return typed<Scalar>(g, name, {T, B, N}, true);
    };
    const auto gy = upstream(d_y, "d_y"), gh = upstream(d_h, "d_h"), go = upstream(d_o, "d_o"),
               gt = upstream(d_trace, "d_trace");
    Arr<Scalar> dx = want_x ? pooled_array<Scalar>({T, B, C}) : Arr<Scalar>(0);
    Arr<Scalar> dy0 = want_y0 ? Arr<Scalar>({B, N}) : Arr<Scalar>(0);
    Arr<Scalar> dk = pooled_array<Scalar>({C, 3 * N}), drk = pooled_array<Scalar>({N, 3 * N});
    Arr<Scalar> db(3 * N), drb(3 * N), dthr(N);
    EvnnEgruSequenceIo<Scalar> io;
    io.steps = T;
    io.batch = B;
    io.x = t.x.data();
    io.y0 = t.y0 ? t.y0->data() : nullptr;
    io.zoneout = t.zoneout ? t.zoneout->data() : nullptr;
    io.y = const_cast<Scalar*>(t.y.data());
    io.h = const_cast<Scalar*>(t.h.data());
    EvnnEgruUpstream<Scalar> up{gy ? gy->data() : nullptr, gh ? gh->data() : nullptr,
                                go ? go->data() : nullptr, gt ? gt->data() : nullptr};
    EvnnEgruGradients<Scalar> out{want_x ? dx.mutable_data() : nullptr,
                                  want_y0 ? dy0.mutable_data() : nullptr,
                                  dk.mutable_data(),
                                  drk.mutable_data(),
                                  db.mutable_data(),
                                  drb.mutable_data(),
                                  dthr.mutable_data()};
    {
      py::gil_scoped_release release;
      thread_local EvnnEgruBackward<Scalar> backward;  // its scratch is reused across calls
      backward.run(w.view, io, t.tape, up, out, threads);
    }
    return py::make_tuple(want_x ? py::object(dx) : py::none(),
                          want_y0 ? py::object(dy0) : py::none(), dk, drk, db, drb, dthr);
  }

  std::variant<std::shared_ptr<TapeOf<double>>, std::shared_ptr<TapeOf<float>>> tape_;
};

template <class Scalar>
py::tuple forward(const py::handle& x_obj, const py::object& y0_obj, const py::object& k,
                  const py::object& rk, const py::object& b, const py::object& rb,
                  const py::object& th, const py::object& zoneout, double dampening, double support,
                  int threads) {
  const Weights<Scalar> w(k, rk, b, rb, th, dampening, support);
  const py::ssize_t N = w.view.units, C = w.view.inputs;
  auto t = std::make_shared<TapeOf<Scalar>>();
  t->x = typed<Scalar>(x_obj, "input", {-1, -1, C}, true);
  const py::ssize_t T = t->x.shape(0), B = t->x.shape(1);
  if (T < 1 || B < 1) throw std::invalid_argument("evnn_egru: input: empty sequence or batch");
  if (!y0_obj.is_none()) t->y0 = typed<Scalar>(y0_obj, "state", {B, N}, true);
  if (!zoneout.is_none()) t->zoneout = typed<Scalar>(zoneout, "zoneout", {T, B, N}, true);
  t->y = pooled_array<Scalar>({T, B, N});
  t->h = pooled_array<Scalar>({T, B, N});
  Arr<Scalar> o = pooled_array<Scalar>({T, B, N}), trace = pooled_array<Scalar>({T, B, N});
  EvnnEgruSequenceIo<Scalar> io{T,
                                B,
                                t->x.data(),
                                t->y0 ? t->y0->data() : nullptr,
                                t->zoneout ? t->zoneout->data() : nullptr,
                                t->y.mutable_data(),
                                t->h.mutable_data(),
                                o.mutable_data(),
                                trace.mutable_data()};
  {
    py::gil_scoped_release release;
    evnn_egru_forward(w.view, io, t->tape, threads);
  }
  py::object y = t->y, h = t->h;
  return py::make_tuple(y, h, o, trace, EvnnTape(std::move(t)));
}

}  // namespace

void bind_evnn(py::module_& m) {
  py::class_<EvnnTape>(m, "EvnnEgruTape",
                       "The tape of one evnn_egru_forward call, for one backward pass.")
      .def("backward", &EvnnTape::backward, py::arg("kernel"), py::arg("recurrent_kernel"),
           py::arg("bias"), py::arg("recurrent_bias"), py::arg("thr"), py::kw_only(),
           py::arg("dampening_factor"), py::arg("pseudo_derivative_support"),
           py::arg("d_y") = py::none(), py::arg("d_h") = py::none(), py::arg("d_o") = py::none(),
           py::arg("d_trace") = py::none(), py::arg("want_input") = true,
           py::arg("want_state") = true, py::arg("threads") = 0,
           "Gradients (d_input or None, d_state or None, d_kernel, d_recurrent_kernel, d_bias, "
           "d_recurrent_bias, d_thr) from the upstream gradients of y, h, o, trace (T, B, N).");
  m.def(
      "evnn_egru_forward",
      [](const py::array& x, const py::object& y0, const py::object& k, const py::object& rk,
         const py::object& b, const py::object& rb, const py::object& th, const py::object& zoneout,
         double dampening, double support, int threads) {
        if (threads < 0 || threads > 4096)
          throw std::invalid_argument("evnn_egru: threads must be in [0, 4096]");
        if (x.dtype().is(py::dtype::of<float>()))
          return forward<float>(x, y0, k, rk, b, rb, th, zoneout, dampening, support, threads);
        if (x.dtype().is(py::dtype::of<double>()))
          return forward<double>(x, y0, k, rk, b, rb, th, zoneout, dampening, support, threads);
        throw std::invalid_argument("evnn_egru: input: expected float32 or float64, got " +
                                    py::str(x.dtype()).cast<std::string>());
      },
      py::arg("input"), py::arg("state"), py::arg("kernel"), py::arg("recurrent_kernel"),
      py::arg("bias"), py::arg("recurrent_bias"), py::arg("thr"), py::kw_only(),
      py::arg("zoneout") = py::none(), py::arg("dampening_factor") = 0.7,
      py::arg("pseudo_derivative_support") = 1.0, py::arg("threads") = 0,
      "EvNN-convention EGRU over input (T, B, C) from state y0 (B, N) or None: returns (y, h, o, "
      "trace) each (T, B, N) and the tape for backward. zoneout: (T, B, N) weights of the new "
      "value, or None.");
}

}  // namespace egret::python
