// Exact gradients against central finite differences of the exact forward pass (double
// precision, Richardson-extrapolated central differences, every perturbation checked to leave
// the sequence of events unchanged): random networks of 3-20 units and 1-3 layers, random input
// streams, every parameter class (U_X, V_X, b_X, theta, tau_m, tau_o, W_o, b_o) and the input
// event times and values. Relative error at most 1e-6.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "adjoint/losses.hpp"
#include "adjoint/reverse_sweep.hpp"
#include "adjoint/state_regularizer.hpp"
#include "events/synthetic_input.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "models/continuous_egru/earliest_crossings.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using P = egret::ContinuousEgruParams<double>;

struct Problem {
  std::vector<P> layers;
  egret::Readout<double> readout;
  std::vector<egret::InputEvent<double>> input;
  Index channels = 0;
  double end = 0;
  std::vector<double> readout_times;
  std::vector<std::pair<double, double>> readout_windows;
  egret::LossKind loss = egret::LossKind::kSoftmaxCrossEntropy;
  egret::ReadoutTargets<double> targets;
  egret::ActivityRegularizer activity;
  egret::StateRegularizer state;      // its value comes from the backward pass
  bool input_time_adjoints = true;    // false: as in training (no per-event input adjoints)
  std::int64_t checkpoint_every = 0;  // of the tape (0: the layers choose)
  // Simultaneous inputs (and their releases) as one tape step, as training records them
  // (SimOptions::tape_merge_simultaneous_inputs; needs input_time_adjoints false).
  bool merge_simultaneous_inputs = false;
  // Layer 0's inputs as window changes where the tape merges (SimOptions::net_input_windows).
  bool net_input_windows = true;
  // Crossings of one layer less than this far apart (ms) count as one group in Run::events,
  // its units in index order: a perturbation may separate tied units (0: off).
  double tie_group_width = 0;
  // Layer 0's tied units, whose V entries among each other are not sampled: such a weight makes
  // them act on each other after the tie, and the loss has a kink where that separates them.
  std::vector<Index> tied_units;
};

egret::Network<double> build(const Problem& pr) {
  egret::Network<double> net;
  for (const auto& p : pr.layers)
    net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  net.set_readout(pr.readout);
  return net;
}

struct Run {
  double loss = 0;
  std::size_t tape_bytes = 0;
  // Every step of every layer in processing order (kind, layer, index), and the position of each
  // point readout among them: a perturbation that reorders any two events (not only emissions)
  // or moves an event across a readout is detected.
  std::vector<std::tuple<egret::EventKind, Index, Index>> events;
  std::size_t emitted = 0;
  std::int64_t largest_step = 0;  // the most items of one step (units crossing together)
  std::size_t tape_steps = 0;
  std::vector<std::tuple<double, egret::EventKind, Index>> steps;  // time, kind, layer
  egret::Gradient<double> grad;
  egret::BackwardReport report;
};

// Every step's items in processing order, where consecutive steps within `width` ms of the
// group's first form one group, its items sorted: tied units' crossings, the releases of their
// events and their arrivals at the next layer, which a perturbation separates and may interleave.
std::vector<std::tuple<egret::EventKind, Index, Index>> grouped_crossings(
    const egret::Tape<double>& tape, double width) {
  std::vector<std::tuple<egret::EventKind, Index, Index>> out;
  std::size_t group = 0;  // where the open group starts in out
  double group_time = -1;
  for (const auto& st : tape.steps) {
    if (st.time - group_time > width) {
      group = out.size();
      group_time = st.time;
    }
    for (std::int64_t k = 0; k < tape.n_items(st); ++k)
      out.emplace_back(st.kind, st.layer,
                       tape.items[static_cast<std::size_t>(st.first_item + k)].index);
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(group), out.end());
  }
  return out;
}

Run run(const Problem& pr, bool with_gradient) {
  auto net = build(pr);
  egret::InputStream<double> input(pr.input, pr.channels);
  egret::Tape<double> tape;

  egret::SimOptions<double> opt;
  opt.end_time = pr.end;
  opt.readout_times = pr.readout_times;
  opt.readout_windows = pr.readout_windows;
  opt.tape = &tape;
  opt.tape_checkpoint_every = pr.checkpoint_every;
  opt.tape_merge_simultaneous_inputs = pr.merge_simultaneous_inputs;
  opt.net_input_windows = pr.net_input_windows;
  const auto fwd = egret::simulate(net, input, opt);
  const auto loss = egret::evaluate_loss(pr.loss, fwd.readouts, pr.targets);
  const auto act = egret::activity_term(net, tape, pr.end, pr.activity);
  Run r;
  r.loss = loss.loss + act.value;
  r.emitted = fwd.trace.size();
  r.tape_bytes = tape.bytes();
  r.tape_steps = tape.steps.size();
  for (const auto& st : tape.steps) r.steps.emplace_back(st.time, st.kind, st.layer);
  if (pr.tie_group_width > 0) r.events = grouped_crossings(tape, pr.tie_group_width);
  for (const auto& st : tape.steps) {
    if (pr.tie_group_width > 0) {
      r.largest_step = std::max<std::int64_t>(r.largest_step, tape.n_items(st));
      continue;
    }
    // A merged step of simultaneous inputs stands for one step per input.
    const bool merged = st.kind != egret::EventKind::kInternal && tape.n_items(st) > 1;
    for (std::int64_t k = 0; k < (merged ? tape.n_items(st) : 1); ++k)
      r.events.emplace_back(st.kind, st.layer,
                            tape.items[static_cast<std::size_t>(st.first_item + k)].index);
    if (!merged) r.largest_step = std::max<std::int64_t>(r.largest_step, tape.n_items(st));
  }
  // Where each point readout falls in the sequence: an event crossing a readout time makes o(t_j)
  // jump without reordering any events.
  for (double t : pr.readout_times) {
    Index before = 0;
    for (const auto& st : tape.steps)
      before += st.time <= t ? (st.kind == egret::EventKind::kInternal && pr.tie_group_width == 0
                                    ? 1
                                    : tape.n_items(st))
                             : 0;
    r.events.emplace_back(egret::EventKind::kReadout, -1, before);
  }
  if (with_gradient || pr.state.active()) {
    r.grad = egret::zero_gradient(net, input.size());
    const auto d_o = egret::readout_backward(net, fwd, loss.dlogits, r.grad);
    r.report =
        egret::reverse_sweep(net, tape, fwd, d_o, r.grad, &act, pr.input_time_adjoints, pr.state);
    r.loss += r.report.state_cost;
  }
  return r;
}

// self_recurrence: whether a unit's own event reaches its own pre-activations (the diagonal of
// V; false is the paper's Eq. S11 and the default).
Problem random_problem(std::uint64_t seed, std::vector<Index> units, Index channels, double end,
                       bool self_recurrence = false) {
  std::mt19937_64 rng(seed), spread(seed + 7);
  std::uniform_real_distribution<double> U(0, 1);
  Problem pr;
  pr.channels = channels;
  pr.end = end;
  Index inputs = channels;
  for (std::size_t l = 0; l < units.size(); ++l) {
    P::RandomInit init;
    init.weight_scale = 1.5;
    init.bias_z = 0.9;
    init.bias_spread = 0.3;
    P p = P::random(units[l], inputs, seed * 10 + l, init, self_recurrence);
    for (Index m = 0; m < p.units(); ++m) p.theta[m] = 0.2 + 0.2 * U(rng);
    // Each unit's own time constants, within +-30 % of the layer's typical value.
    const double tau_m = 3.0 + 4.0 * U(rng), tau_o = 4.0 + 4.0 * U(rng);
    for (Index m = 0; m < p.units(); ++m) {
      p.tau_m[m] = tau_m * (0.7 + 0.6 * U(spread));
      p.tau_o[m] = tau_o * (0.7 + 0.6 * U(spread));
    }
    p.window_input = 2.0 + 3.0 * U(rng);
    p.window_recurrent = l % 2 == 0 ? 1.5 + 2.0 * U(rng) : std::numeric_limits<double>::infinity();
    for (Index m = 0; m < p.units(); ++m) p.c_init[m] = 0.1 * U(rng);
    pr.layers.push_back(p);
    inputs = units[l];
  }
  const Index classes = 3;
  pr.readout.W_o.resize(classes, inputs);
  pr.readout.b_o.resize(classes);
  for (Index i = 0; i < classes; ++i) {
    pr.readout.b_o[i] = U(rng) - 0.5;
    for (Index j = 0; j < inputs; ++j) pr.readout.W_o(i, j) = 2 * U(rng) - 1;
  }
  const auto stream = egret::poisson_input<double>(channels, 120.0, end, seed + 99);
  pr.input = stream.events();
  for (auto& e : pr.input) e.value = 0.5 + U(rng);  // graded input values
  pr.readout_times = {0.55 * end, 0.8 * end, end};
  pr.targets.labels = {0, 2, 1};
  return pr;
}

// One parameter of the problem: where it lives and where its gradient lives.
struct Param {
  std::string name;
  std::function<double&(Problem&)> value;
  std::function<double(const egret::Gradient<double>&)> grad;
};

std::vector<Param> sample_parameters(const Problem& pr, std::mt19937_64& rng, int per_matrix) {
  std::vector<Param> out;
  auto pick = [&](Index n) { return static_cast<Index>(rng() % static_cast<std::uint64_t>(n)); };
  for (std::size_t l = 0; l < pr.layers.size(); ++l) {
    const P& p = pr.layers[l];
    const std::string L = "layer" + std::to_string(l) + ".";
    using M = egret::Matrix<double>;
    struct Mat {
      const char* name;
      M P::*param;
    };
    for (const Mat& m : {Mat{"U_u", &P::U_u}, Mat{"U_r", &P::U_r}, Mat{"U_z", &P::U_z},
                         Mat{"V_u", &P::V_u}, Mat{"V_r", &P::V_r}, Mat{"V_z", &P::V_z}}) {
      for (int k = 0; k < per_matrix; ++k) {
        Index i = pick((p.*(m.param)).rows()), j = pick((p.*(m.param)).cols());
        // A sparse layer's parameters are its connections (the nonzero weights); without
        // self-recurrence the diagonal of V is no parameter.
        const bool recurrent = m.name[0] == 'V';
        auto tied = [&](Index unit) {
          return l == 0 &&
                 std::find(pr.tied_units.begin(), pr.tied_units.end(), unit) != pr.tied_units.end();
        };
        while ((p.sparse && (p.*(m.param))(i, j) == 0) ||
               (recurrent && !p.self_recurrence && i == j) || (recurrent && tied(i) && tied(j))) {
          i = pick((p.*(m.param)).rows());
          j = pick((p.*(m.param)).cols());
        }
        out.push_back({L + m.name + "(" + std::to_string(i) + "," + std::to_string(j) + ")",
                       [=](Problem& q) -> double& { return (q.layers[l].*(m.param))(i, j); },
                       [=](const egret::Gradient<double>& g) {
                         return g.layers[l].at(m.name, "test")(i, j);
                       }});
      }
    }
    using V = egret::Vector<double>;
    struct Vec {
      const char* name;
      V P::*param;
    };
    // The per-unit vectors, time constants included: a few units' own each.
    std::vector<Vec> vectors = {Vec{"b_u", &P::b_u},     Vec{"b_r", &P::b_r},
                                Vec{"b_z", &P::b_z},     Vec{"theta", &P::theta},
                                Vec{"tau_m", &P::tau_m}, Vec{"tau_o", &P::tau_o}};
    if (p.gate_kernel == egret::GateKernel::kExp) vectors.push_back({"tau_s", &P::tau_s});
    for (const Vec& v : vectors) {
      for (int k = 0; k < std::max(2, per_matrix / 2); ++k) {
        const Index i = pick(p.units());
        out.push_back({L + v.name + "(" + std::to_string(i) + ")",
                       [=](Problem& q) -> double& { return (q.layers[l].*(v.param))(i); },
                       [=](const egret::Gradient<double>& g) {
                         return g.layers[l].at(v.name, "test")(i, 0);
                       }});
      }
    }
  }
  for (int k = 0; k < per_matrix; ++k) {
    const Index i = pick(pr.readout.W_o.rows()), j = pick(pr.readout.W_o.cols());
    out.push_back({"W_o(" + std::to_string(i) + "," + std::to_string(j) + ")",
                   [=](Problem& q) -> double& { return q.readout.W_o(i, j); },
                   [=](const egret::Gradient<double>& g) { return g.W_o(i, j); }});
  }
  for (Index i = 0; i < pr.readout.b_o.size(); ++i)
    out.push_back({"b_o(" + std::to_string(i) + ")",
                   [=](Problem& q) -> double& { return q.readout.b_o(i); },
                   [=](const egret::Gradient<double>& g) { return g.b_o(i); }});
  // Input events (the stream is sorted; small perturbations keep the order).
  for (int k = 0; k < per_matrix && pr.input_time_adjoints; ++k) {
    const std::size_t i = static_cast<std::size_t>(pick(static_cast<Index>(pr.input.size())));
    out.push_back({"input_time[" + std::to_string(i) + "]",
                   [=](Problem& q) -> double& { return q.input[i].time; },
                   [=](const egret::Gradient<double>& g) { return g.input_time[i]; }});
    out.push_back({"input_value[" + std::to_string(i) + "]",
                   [=](Problem& q) -> double& { return q.input[i].value; },
                   [=](const egret::Gradient<double>& g) { return g.input_value[i]; }});
  }
  return out;
}

struct FdStats {
  int checked = 0, skipped = 0;
  double worst = 0;
  std::string worst_name;
};

// Central differences at h and h/2, Richardson-combined (error O(h^4)); the sequence of all
// events (inputs, releases, crossings) must be the same at all four points.
// `tolerance`: relative, 1e-6 for closed-form flows, 1e-5 for Odeint flows (docs/architecture.md,
// "Verification standards").
// `extra`: parameters checked besides the sampled ones.
void check_problem(const Problem& base, std::uint64_t seed, int per_matrix, FdStats& stats,
                   std::size_t min_events, double tolerance = 1e-6, double largest_step = 1e-4,
                   const std::vector<Param>& extra = {}) {
  const Run r0 = run(base, true);
  ASSERT_GE(r0.emitted, min_events) << "scenario too quiet to be a test";
  ASSERT_TRUE(r0.report.ok()) << r0.report.first_problem;
  std::mt19937_64 rng(seed);
  std::vector<Param> params = sample_parameters(base, rng, per_matrix);
  params.insert(params.end(), extra.begin(), extra.end());
  for (const Param& prm : params) {
    Problem q = base;
    const double x0 = prm.value(q);
    // The largest step (1e-4, 1e-5, else 1e-6 or 1e-7: two events may be a few 1e-6 ms apart) at
    // which no two events change order.
    double fd = 0, h = 0;
    bool valid = false;
    for (double rel : {1e-4, 1e-5, 1e-6, 1e-7}) {
      if (rel > largest_step) continue;
      h = rel * std::max(1.0, std::abs(x0));
      const double offsets[4] = {h, -h, h / 2, -h / 2};
      double f[4];
      bool same = true;
      for (int k = 0; k < 4 && same; ++k) {
        prm.value(q) = x0 + offsets[k];
        const Run rk = run(q, false);
        same = rk.events == r0.events;
        f[k] = rk.loss;
      }
      prm.value(q) = x0;
      if (!same) continue;
      const double d1 = (f[0] - f[1]) / (2 * h), d2 = (f[2] - f[3]) / h;
      // The same events do not make the loss smooth over [x0 - h, x0 + h]: an event time that
      // crosses a readout window's boundary leaves a kink. There the two differences disagree
      // by far more than their O(h^2) and rounding errors, and a smaller step is tried.
      const double rounding = 64 * 2.2e-16 * std::max(1.0, std::abs(r0.loss)) / h;
      if (std::abs(d1 - d2) > 1e-3 * std::max(std::abs(d1), std::abs(d2)) + 100 * rounding)
        continue;
      fd = (4 * d2 - d1) / 3;
      valid = true;
      break;
    }
    if (!valid) {
      ++stats.skipped;
      continue;
    }
    const double g = prm.grad(r0.grad);
    // Relative error. Small entries are compared absolutely to the finite differences' own
    // rounding noise, 64 eps |L| / h (1.6e-10 for h = 1e-4 and L = 1.1), and never below 1e-10.
    const double noise = std::max(1e-10, 64 * 2.2e-16 * std::max(1.0, std::abs(r0.loss)) / h);
    const double err = std::abs(g - fd) / std::max({std::abs(fd), std::abs(g), noise / 1e-6});
    ++stats.checked;
    if (err > stats.worst) {
      stats.worst = err;
      stats.worst_name = prm.name;
    }
    EXPECT_LE(err, tolerance) << prm.name << ": adjoint " << g << " vs finite difference " << fd;
  }
}

// Both ways of the sender's own jump: without self-recurrence (Eq. S11, the default) and with
// it (the diagonal of V applied, the layer option "self_recurrence": true).
TEST(AdjointFiniteDifference, OneLayer) {
  for (const bool self_recurrence : {false, true}) {
    FdStats st;
    for (std::uint64_t seed : {1, 2, 3}) {
      const Index n = seed == 1 ? 3 : (seed == 2 ? 8 : 20);
      check_problem(random_problem(seed, {n}, 4, 40.0, self_recurrence), seed, 6, st, 20);
    }
    std::printf(
        "  one layer, self_recurrence %d: %d gradients checked, %d skipped (event sequence "
        "changed), worst relative error %.2e (%s)\n",
        self_recurrence, st.checked, st.skipped, st.worst, st.worst_name.c_str());
    EXPECT_GT(st.checked, 150);
    EXPECT_LT(st.skipped, st.checked / 10);
  }
}

TEST(AdjointFiniteDifference, TwoAndThreeLayers) {
  FdStats st;
  check_problem(random_problem(11, {6, 4}, 3, 40.0), 11, 5, st, 20);
  check_problem(random_problem(12, {5, 7, 3}, 3, 40.0), 12, 5, st, 20);
  check_problem(random_problem(13, {12, 3, 9}, 4, 30.0), 13, 4, st, 20);
  std::printf("  multi-layer: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 200);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// The exp gate kernel (issue 15 item 2): c integrated by Odeint forward and the adjoint system
// backward. Every parameter class including tau_s, input times and values, 1-2 layers, with and
// without self-recurrence; relative error at most 1e-5 (docs/architecture.md, Odeint flows), at the
// tolerance 1e-13 on both integrations.
Problem exp_kernel_problem(std::uint64_t seed, std::vector<Index> units, bool self_recurrence) {
  Problem pr = random_problem(seed, std::move(units), 3, 30.0, self_recurrence);
  for (std::size_t l = 0; l < pr.layers.size(); ++l) {
    P& p = pr.layers[l];
    p.gate_kernel = egret::GateKernel::kExp;
    for (Index m = 0; m < p.units(); ++m)  // each unit's own, around 2 ms, 5 ms, ...
      p.tau_s[m] = (2.0 + 3.0 * static_cast<double>(l)) * (0.7 + 0.1 * static_cast<double>(m % 7));
    p.ode_tolerance = 1e-15;
    p.crossing_tolerance = 1e-13;
  }
  return pr;
}

TEST(AdjointFiniteDifference, ExpGateKernel) {
  FdStats st;
  check_problem(exp_kernel_problem(71, {5}, false), 71, 5, st, 15, 1e-5);
  check_problem(exp_kernel_problem(72, {8}, true), 72, 4, st, 15, 1e-5);
  check_problem(exp_kernel_problem(73, {6, 4}, false), 73, 4, st, 15, 1e-5);
  std::printf("  exp kernel: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 150);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// Window readouts (the mean of the output trace over an interval), alone and mixed with points.
TEST(AdjointFiniteDifference, WindowReadouts) {
  FdStats st;
  for (std::uint64_t seed : {31, 32}) {
    Problem pr = random_problem(seed, seed == 31 ? std::vector<Index>{6} : std::vector<Index>{5, 4},
                                3, 40.0);
    pr.readout_windows = {{12.0, 22.0}, {20.0, 39.5}};
    if (seed == 31) pr.readout_times.clear();
    pr.targets.labels.resize(pr.readout_times.size() + pr.readout_windows.size(), 1);
    check_problem(pr, seed, 5, st, 20);
  }
  std::printf("  windows: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 100);
  EXPECT_LT(st.skipped, st.checked / 10);
}

TEST(AdjointFiniteDifference, BinaryCrossEntropyAndMeanSquaredError) {
  FdStats st;
  for (auto kind : {egret::LossKind::kBinaryCrossEntropy, egret::LossKind::kMeanSquaredError}) {
    Problem pr = random_problem(21, {5, 4}, 3, 40.0);
    pr.loss = kind;
    pr.targets.labels.clear();
    pr.targets.values = {{1, 0, 1}, {0, 0, 1}, {1, 1, 0}};
    check_problem(pr, 21, 4, st, 20);
  }
  std::printf("  bce/mse: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 100);
}

// The activity regularizer (smooth event-count surrogate) on every layer, with readouts.
TEST(AdjointFiniteDifference, ActivityRegularizer) {
  FdStats st;
  for (std::uint64_t seed : {41, 42}) {
    Problem pr = random_problem(seed, seed == 41 ? std::vector<Index>{6} : std::vector<Index>{5, 4},
                                3, 40.0);
    pr.activity.weight = 0.5;
    pr.activity.target_hz = 20;
    check_problem(pr, seed, 5, st, 20);
  }
  std::printf(
      "  activity regularizer: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
      st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 100);
}

// Prints an exp-kernel test's checks; more than 100 gradients, under a tenth skipped.
void report_exp_kernel_checks(const char* what, const FdStats& st) {
  std::printf("  exp kernel %s: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              what, st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 100);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// The activity regularizer with the exp gate kernel: its gradient moves event times, which the
// exp kernel's crossing-time adjoints carry like the box kernel's.
TEST(AdjointFiniteDifference, ExpGateKernelActivityRegularizer) {
  FdStats st;
  for (std::uint64_t seed : {77, 78}) {
    Problem pr = exp_kernel_problem(
        seed, seed == 77 ? std::vector<Index>{5} : std::vector<Index>{5, 4}, false);
    pr.activity.weight = 0.5;
    pr.activity.target_hz = 20;
    check_problem(pr, seed, 4, st, 15, 1e-5);
  }
  report_exp_kernel_checks("activity regularizer", st);
}

// The state regulariser (the EGRU paper's L_act) with the level's theta attached, so that every
// parameter has the exact gradient of R: one and two layers, every parameter class and the input
// events. Its weight is large enough that R moves the gradient by as much as the loss does.
// R is C^1 but not C^2 in the parameters: its second derivative sums 1 / |dc/dt| over the times
// c passes the level, and dc/dt jumps at every step, so R'' jumps where a level crossing moves
// across a step. A stencil of +-1e-4 straddles such a point often enough (a crossing within
// ~2e-3 ms of one of hundreds of steps) to be off by 1e-5 relative; the differences here start at
// 1e-6 (worst error 5e-8, against 2.6e-5 from the 1e-4 start).
// The state term at weight 20, margin 0.05, theta attached, checked from the 1e-6 stencil.
void check_state_regularizer(Problem pr, std::uint64_t seed, int per_matrix, FdStats& st,
                             std::size_t min_events, double tolerance) {
  pr.state.weight = 20.0;
  pr.state.margin = 0.05;
  pr.state.detach_threshold = false;
  const ::Run r = run(pr, true);
  ASSERT_GT(r.report.state_cost, 0.05 * r.loss) << "the term must matter in this scenario";
  check_problem(pr, seed, per_matrix, st, min_events, tolerance, 1e-6);
}

TEST(AdjointFiniteDifference, StateRegularizer) {
  FdStats st;
  for (std::uint64_t seed : {51, 52})
    check_state_regularizer(
        random_problem(seed, seed == 51 ? std::vector<Index>{6} : std::vector<Index>{5, 4}, 3,
                       40.0),
        seed, 5, st, 20, 1e-6);
  std::printf(
      "  state regularizer: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
      st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 100);
}

// The state regulariser with the exp gate kernel: the running cost's source in lam_c is
// integrated with the adjoint system, across the kinks where c passes the level, and the final
// interval after the layer's last step starts the adjoints (docs/adjoint.md section 4b). Every
// parameter class (theta attached), input times and values, one and two layers; the
// differences start at 1e-6 as in the box kernel's test above.
constexpr double kStateTestTolerance = 1e-13;
TEST(AdjointFiniteDifference, ExpGateKernelStateRegularizer) {
  FdStats st;
  for (std::uint64_t seed : {74, 75}) {
    Problem pr = exp_kernel_problem(
        seed, seed == 74 ? std::vector<Index>{5} : std::vector<Index>{5, 4}, false);
    // Each difference quotient runs the backward sweep too (the value comes from it), whose
    // integrator steps finely across the kinks: a looser tolerance keeps the test affordable
    // under the sanitizers.
    for (auto& p : pr.layers) p.ode_tolerance = kStateTestTolerance;
    check_state_regularizer(pr, seed, 3, st, 15, 1e-5);
  }
  report_exp_kernel_checks("state regularizer", st);
}

// The first layer's c at the midpoints of `per` equal sub-intervals of every interval between
// the network's steps (state snapshots of a second, untaped run), with the sub-intervals' widths:
// c is smooth on each, so the midpoint rule integrates functions of it to O(h^2), independently
// of the adjoint's closed forms.
struct MidpointSamples {
  std::vector<double> width;
  std::vector<std::vector<double>> c;  // per midpoint, per unit
};
MidpointSamples midpoint_samples(const Problem& pr, int per) {
  auto net = build(pr);
  egret::InputStream<double> input(pr.input, pr.channels);
  egret::Tape<double> tape;
  egret::SimOptions<double> opt;
  opt.end_time = pr.end;
  opt.tape = &tape;
  (void)egret::simulate(net, input, opt);
  std::vector<double> bounds = {0};
  for (const auto& step : tape.steps)
    if (step.time > bounds.back()) bounds.push_back(step.time);
  if (bounds.back() < pr.end) bounds.push_back(pr.end);
  MidpointSamples out;
  egret::SimOptions<double> sampled;
  sampled.end_time = pr.end;
  for (std::size_t k = 1; k < bounds.size(); ++k) {
    const double h = (bounds[k] - bounds[k - 1]) / per;
    for (int j = 0; j < per; ++j) {
      sampled.snapshot_times.push_back(bounds[k - 1] + (j + 0.5) * h);
      out.width.push_back(h);
    }
  }
  egret::Network<double> fresh = build(pr);
  const auto fwd = egret::simulate(fresh, input, sampled);
  for (const auto& snap : fwd.snapshots) out.c.push_back(snap.layers[0].at("c"));
  return out;
}

// The state regulariser's value (weight 1, margin 0.08) against an independent quadrature of
// the forward pass's own states: c sampled (state snapshots) at the midpoints of 400
// sub-intervals of every interval between the layer's steps, where c is smooth; the midpoint
// rule's error is O(h^2).
void expect_state_cost_is_the_integral_of_the_excess(Problem pr) {
  pr.state.weight = 1.0;
  pr.state.margin = 0.08;
  const ::Run r = run(pr, true);
  const MidpointSamples m = midpoint_samples(pr, 400);
  ASSERT_EQ(m.c.size(), m.width.size());
  const P& p = pr.layers[0];
  double integral = 0;
  for (std::size_t k = 0; k < m.width.size(); ++k)
    for (Index i = 0; i < p.units(); ++i)
      integral +=
          m.width[k] * std::max(0.0, m.c[k][static_cast<std::size_t>(i)] - (p.theta[i] - 0.08));
  const double expected = integral / (static_cast<double>(p.units()) * pr.end);
  EXPECT_GT(expected, 1e-3);
  EXPECT_NEAR(r.report.state_cost, expected, 1e-5 * expected);
}

TEST(AdjointFiniteDifference, StateRegularizerValueIsTheIntegralOfTheExcess) {
  expect_state_cost_is_the_integral_of_the_excess(random_problem(53, {7}, 3, 30.0));
}

// The exp gate kernel's value is integrated with the adjoints.
TEST(AdjointFiniteDifference, ExpGateKernelStateRegularizerValueIsTheIntegralOfTheExcess) {
  expect_state_cost_is_the_integral_of_the_excess(exp_kernel_problem(76, {6}, false));
}

// Detaching theta from the level (the paper's choice, the default) changes only theta's
// gradient, by weight / (N T) times the time each unit spends above its level (the quadrature
// above); everything else is bitwise the attached gradient.
TEST(AdjointFiniteDifference, DetachedThresholdDropsOnlyTheLevelsTerm) {
  Problem pr = random_problem(54, {6}, 3, 30.0);
  pr.state.weight = 1.0;
  pr.state.detach_threshold = false;
  const ::Run attached = run(pr, true);
  pr.state.detach_threshold = true;
  const ::Run detached = run(pr, true);
  EXPECT_EQ(attached.report.state_cost, detached.report.state_cost);
  const auto& ga = attached.grad.layers[0];
  const auto& gd = detached.grad.layers[0];
  for (std::size_t k = 0; k < ga.size(); ++k) {
    if (ga[k].spec.name == "theta") continue;
    EXPECT_EQ(ga[k].value, gd[k].value) << ga[k].spec.name;
  }
  // Time above the level per unit, by the midpoint rule on a fine grid between steps.
  const MidpointSamples m = midpoint_samples(pr, 500);
  const P& p = pr.layers[0];
  const double w = 1.0 / (static_cast<double>(p.units()) * pr.end);
  int units_above = 0;
  for (Index i = 0; i < p.units(); ++i) {
    double above = 0;
    for (std::size_t k = 0; k < m.width.size(); ++k)
      if (m.c[k][static_cast<std::size_t>(i)] > p.theta[i] - 0.05) above += m.width[k];
    const double difference = gd.at("theta", "test")(i, 0) - ga.at("theta", "test")(i, 0);
    // The time above the level is the sum of sub-interval widths, exact to one width per level
    // crossing (the kink), so the bound is a few widths per crossing.
    EXPECT_NEAR(difference, w * above, w * 0.05) << "unit " << i;
    units_above += above > 0.1 ? 1 : 0;
  }
  EXPECT_GE(units_above, 3);
}

// A binned input stream (every input time rounded up to a 4 ms grid, so several inputs and
// releases share a time, as in the main job): the forward pass settles the crossing times once
// per time and, without input time adjoints (training), the backward pass skips the intervals of
// length 0 between inputs. Parameter and input value gradients against finite differences, and
// bitwise the same with and without input time adjoints (without them, as in training: the
// simultaneous inputs are one step of the tape, and no input adjoint is reported).
TEST(AdjointFiniteDifference, BinnedInputsAsInTraining) {
  FdStats st;
  for (std::uint64_t seed : {51, 52}) {
    Problem pr = random_problem(seed, seed == 51 ? std::vector<Index>{8} : std::vector<Index>{6, 4},
                                8, 40.0);
    for (auto& e : pr.input) e.time = 4 * std::ceil(e.time / 4);
    // Inputs held (no releases), so that groups of inputs at different times follow each other
    // directly, between crossings.
    pr.layers[0].window_input = std::numeric_limits<double>::infinity();
    pr.layers[0].window_recurrent = std::numeric_limits<double>::infinity();
    // Three groups of inputs at distinct times before the first crossing, one after another.
    std::vector<egret::InputEvent<double>> lead;
    for (double t : {0.5, 1.0, 1.5})
      for (Index ch : {Index(1), Index(4), Index(6)}) lead.push_back({t, ch, 0.3});
    pr.input.insert(pr.input.begin(), lead.begin(), lead.end());
    std::size_t shared = 0;
    for (std::size_t i = 1; i < pr.input.size(); ++i)
      shared += pr.input[i].time == pr.input[i - 1].time;
    ASSERT_GE(shared, 15u) << "the binned stream should have many simultaneous inputs";
    const auto with_times = run(pr, true);
    pr.input_time_adjoints = false;
    pr.merge_simultaneous_inputs = true;
    const auto without = run(pr, true);
    EXPECT_TRUE(without.grad.input_time.empty());
    EXPECT_TRUE(without.grad.input_value.empty());
    ASSERT_EQ(with_times.events, without.events);
    EXPECT_LT(without.tape_steps, with_times.tape_steps - 15) << "simultaneous inputs merged";
    for (std::size_t l = 0; l < pr.layers.size(); ++l)
      for (const char* name : {"U_u", "U_z", "V_r", "b_u", "theta", "tau_m"})
        EXPECT_EQ(with_times.grad.layers[l].at(name, "test"),
                  without.grad.layers[l].at(name, "test"))
            << "layer " << l << " " << name;
    EXPECT_EQ(with_times.grad.W_o, without.grad.W_o);
    check_problem(pr, seed, 5, st, 20);
  }
  std::printf("  binned inputs: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 100);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// A problem on 4 ms bins whose inputs are held two bins (their releases meet the inputs of two
// bins later): one layer of 8 units for the first seed of a pair, two layers (6, 4) for the second.
Problem binned_problem(bool exp_kernel, std::uint64_t seed, bool two_layers) {
  const std::vector<Index> units = two_layers ? std::vector<Index>{6, 4} : std::vector<Index>{8};
  Problem pr =
      exp_kernel ? exp_kernel_problem(seed, units, false) : random_problem(seed, units, 8, 40.0);
  for (auto& e : pr.input) e.time = 4 * std::ceil(e.time / 4);
  pr.layers[0].window_input = 8;
  return pr;
}

// Training records a bin's simultaneous inputs as one tape step, and their releases (at the
// next bins, with those bins' inputs) likewise (SimOptions::tape_merge_simultaneous_inputs). The
// merged tape gives bitwise the loss and parameter gradients of the tape with a step per event,
// for both gate kernels, one and two layers, and a bin repeating a channel; and the gradients
// of the merged run against finite differences.
TEST(AdjointFiniteDifference, MergedSimultaneousInputsGiveTheSameGradient) {
  FdStats st;
  for (const bool exp_kernel : {false, true}) {
    for (std::uint64_t seed : {61, 62}) {
      SCOPED_TRACE((exp_kernel ? "exp kernel, seed " : "box kernel, seed ") + std::to_string(seed));
      Problem pr = binned_problem(exp_kernel, seed, seed == 62);
      // A bin whose inputs repeat a channel: the order of their gradient terms matters.
      for (Index ch : {Index(2), Index(2), Index(0)}) pr.input.push_back({pr.end / 2, ch, 0.4});
      for (double t : {4.0, 12.0, 20.0})  // bins of several inputs whatever the seed
        for (Index ch : {Index(0), Index(1), Index(2)}) pr.input.push_back({t, ch, 0.25});
      std::stable_sort(pr.input.begin(), pr.input.end(),
                       [](const auto& a, const auto& b) { return a.time < b.time; });
      pr.input_time_adjoints = false;
      pr.net_input_windows = false;  // bitwise: netting moves results by rounding (test below)
      const auto separate = run(pr, true);
      pr.merge_simultaneous_inputs = true;
      const auto merged = run(pr, true);
      ASSERT_TRUE(merged.report.ok()) << merged.report.first_problem;
      ASSERT_GE(merged.emitted, 10u) << "scenario too quiet to be a test";
      // Every input that shares its time with the one before joins its step (its release, at
      // the same later time as the other's, too, unless the run ended).
      std::size_t shared = 0;
      for (std::size_t i = 1; i < pr.input.size(); ++i)
        shared += pr.input[i].time == pr.input[i - 1].time;
      ASSERT_GE(shared, 10u);
      EXPECT_LE(merged.tape_steps + shared, separate.tape_steps) << "simultaneous inputs merged";
      ASSERT_EQ(merged.events, separate.events);
      EXPECT_EQ(merged.loss, separate.loss);
      for (std::size_t l = 0; l < pr.layers.size(); ++l)
        for (const auto& e : separate.grad.layers[l])
          EXPECT_EQ(merged.grad.layers[l].at(e.spec.name, "test"), e.value)
              << "layer " << l << " " << e.spec.name;
      EXPECT_EQ(merged.grad.W_o, separate.grad.W_o);
      if (!exp_kernel) check_problem(pr, seed, 4, st, 10);
    }
  }
  std::printf("  merged inputs: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 50);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// Channel 0 repeats its value (the pairs cancel, unless the stream's own inputs of that bin
// pair first), channel 1 changes it, channel 2 repeats within a bin.
void add_netting_inputs(Problem& pr) {
  for (double t : {8.0, 16.0, 24.0}) {
    pr.input.push_back({t, 0, 0.5});
    pr.input.push_back({t, 1, 0.2 + 0.01 * t});
    pr.input.push_back({t, 2, 0.3});
    pr.input.push_back({t, 2, 0.1});
  }
  std::stable_sort(pr.input.begin(), pr.input.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  pr.input_time_adjoints = false;
  pr.merge_simultaneous_inputs = true;
}

std::vector<std::tuple<egret::EventKind, Index, Index>> emissions(const Run& r) {
  std::vector<std::tuple<egret::EventKind, Index, Index>> out;
  for (const auto& e : r.events)
    if (std::get<0>(e) == egret::EventKind::kInternal) out.push_back(e);
  return out;
}

// The netted run of pr against the same merged tape without netting: the same emissions, the
// loss and every gradient within rounding. Returns the netted run.
Run expect_netting_changes_nothing(Problem pr) {
  pr.net_input_windows = false;
  const auto plain = run(pr, true);
  pr.net_input_windows = true;
  auto netted = run(pr, true);
  EXPECT_TRUE(netted.report.ok()) << netted.report.first_problem;
  // At least the engineered bins 16 and 24: their inputs and releases are one step.
  EXPECT_LE(netted.tape_steps + 2, plain.tape_steps)
      << "an input and its meeting release are one step";
  EXPECT_EQ(emissions(netted), emissions(plain));
  EXPECT_NEAR(netted.loss, plain.loss, 1e-12 * std::max(1.0, std::abs(plain.loss)));
  for (std::size_t l = 0; l < pr.layers.size(); ++l)
    for (const auto& e : plain.grad.layers[l]) {
      const auto& g = netted.grad.layers[l].at(e.spec.name, "test");
      const double scale = 1.0 + e.value.cwiseAbs().maxCoeff();
      EXPECT_LT((g - e.value).cwiseAbs().maxCoeff(), 1e-9 * scale)
          << "layer " << l << " " << e.spec.name;
    }
  EXPECT_LT((netted.grad.W_o - plain.grad.W_o).cwiseAbs().maxCoeff(), 1e-9);
  return netted;
}

// Training nets layer 0's inputs with the releases they meet (events/window_changes.hpp): with
// the window two bins, an input meets the end of its channel's input two bins before, and the
// pair is one column scaled by the difference of their values, or none where they are equal.
// Against the same merged tape without netting: the same emissions, the loss and every gradient
// within rounding; and the netted gradients against finite differences of the netted forward.
TEST(AdjointFiniteDifference, NettedInputWindowsGiveTheGradientOfTheModel) {
  FdStats st;
  for (const bool exp_kernel : {false, true}) {
    for (std::uint64_t seed : {71, 72}) {
      SCOPED_TRACE((exp_kernel ? "exp kernel, seed " : "box kernel, seed ") + std::to_string(seed));
      Problem pr = binned_problem(exp_kernel, seed, seed == 72);
      add_netting_inputs(pr);
      const auto netted = expect_netting_changes_nothing(pr);
      ASSERT_GE(netted.emitted, 10u) << "scenario too quiet to be a test";
      if (!exp_kernel) check_problem(pr, seed, 4, st, 10);
    }
  }
  std::printf("  netted inputs: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 50);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// Netting under a second layer with a unit that never fires (bug 1's case: a silent unit below
// the readout), and under a second layer that never fires at all. With one silent unit the
// other units carry layer 0's gradient: netted equals un-netted and finite differences. The
// silent unit's own parameters and its readout column get exactly zero, since nothing it holds
// reaches the loss. With the whole layer silent the loss does not depend on any layer, so every
// layer gradient and W_o's are exactly zero and only b_o moves the loss.
TEST(AdjointFiniteDifference, NettedInputWindowsUnderASilentSecondLayer) {
  FdStats st;
  for (const bool exp_kernel : {false, true}) {
    SCOPED_TRACE(exp_kernel ? "exp kernel" : "box kernel");
    Problem pr = binned_problem(exp_kernel, 72, true);
    add_netting_inputs(pr);
    pr.layers[1].theta[0] = 50;  // far above anything the unit's state reaches
    const auto netted = expect_netting_changes_nothing(pr);
    std::size_t layer0 = 0, layer1 = 0;
    for (const auto& [kind, layer, unit] : emissions(netted)) {
      EXPECT_FALSE(layer == 1 && unit == 0) << "the silent unit fired";
      (layer == 0 ? layer0 : layer1) += 1;
    }
    ASSERT_GE(layer0, 10u);
    ASSERT_GE(layer1, 3u) << "the other units of layer 1 must fire for the case to test anything";
    const auto& g1 = netted.grad.layers[1];
    for (const char* name : {"b_u", "b_r", "b_z", "theta", "tau_m", "tau_o"})
      EXPECT_EQ(g1.at(name, "test")(0, 0), 0.0) << name;
    for (const char* name : {"U_u", "U_z", "U_r", "V_u", "V_z", "V_r"})
      EXPECT_EQ(g1.at(name, "test").row(0).cwiseAbs().maxCoeff(), 0.0) << name;
    for (const char* name : {"V_u", "V_z", "V_r"})  // what the others receive from it
      EXPECT_EQ(g1.at(name, "test").col(0).cwiseAbs().maxCoeff(), 0.0) << name;
    EXPECT_EQ(netted.grad.W_o.col(0).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_GT(netted.grad.layers[0].at("U_u", "test").cwiseAbs().maxCoeff(), 0.0);
    if (!exp_kernel) check_problem(pr, 73, 4, st, 10);

    for (Index m = 0; m < pr.layers[1].units(); ++m) pr.layers[1].theta[m] = 50;
    const auto quiet = run(pr, true);
    for (const auto& [kind, layer, unit] : emissions(quiet)) EXPECT_EQ(layer, 0) << "layer 1 fired";
    for (std::size_t l = 0; l < pr.layers.size(); ++l)
      for (const auto& e : quiet.grad.layers[l])
        EXPECT_EQ(e.value.cwiseAbs().maxCoeff(), 0.0) << "layer " << l << " " << e.spec.name;
    EXPECT_EQ(quiet.grad.W_o.cwiseAbs().maxCoeff(), 0.0);
    EXPECT_GT(quiet.grad.b_o.cwiseAbs().maxCoeff(), 0.0);
  }
  std::printf(
      "  netted inputs, silent unit in layer 1: %d gradients checked, %d skipped, worst "
      "relative error %.2e (%s)\n",
      st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 30);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// The tape keeps the state only at checkpoints every K steps of a layer; the backward pass
// recomputes the steps in between forward. Any K gives bitwise the gradient of the fully taped
// run (K = 1), since the recomputation repeats the forward pass's own arithmetic.
void check_checkpointed_tape(Problem pr) {
  pr.checkpoint_every = 1;
  const auto full = run(pr, true);
  ASSERT_TRUE(full.report.ok());
  ASSERT_GE(full.emitted, 30u);
  for (std::int64_t k : {2, 7, 0, 100000}) {
    pr.checkpoint_every = k;
    const auto r = run(pr, true);
    EXPECT_LT(r.tape_bytes, full.tape_bytes) << "K = " << k;
    EXPECT_EQ(r.loss, full.loss);
    for (std::size_t l = 0; l < pr.layers.size(); ++l)
      for (const auto& e : full.grad.layers[l])
        EXPECT_EQ(r.grad.layers[l].at(e.spec.name, "test"), e.value)
            << "K = " << k << ", layer " << l << " " << e.spec.name;
    EXPECT_EQ(r.grad.W_o, full.grad.W_o);
    EXPECT_EQ(r.grad.input_time, full.grad.input_time) << "K = " << k;
    EXPECT_EQ(r.grad.input_value, full.grad.input_value) << "K = " << k;
  }
}

// Both gate kernels: the exp kernel's recomputation repeats the forward integration.
TEST(AdjointFiniteDifference, CheckpointedTapeGivesTheFullyTapedGradient) {
  for (const bool exp_kernel : {false, true}) {
    SCOPED_TRACE(exp_kernel ? "exp kernel" : "box kernel");
    check_checkpointed_tape(exp_kernel ? exp_kernel_problem(61, {9, 5}, false)
                                       : random_problem(61, {9, 5}, 4, 60.0));
  }
}

// A sparsely connected layer (ContinuousEgruParams::sparse) keeps each unit's state at its own
// time and touches only an event's connections, forward and backward (its adjoint moves each
// unit across its own pieces of trajectory, box_sparse_adjoint.hpp); the same weights
// in a dense layer give the same events and, on the connections, the same gradient to rounding
// (1e-12 relative). Absent connections get no gradient (the dense layer gives them one), and the
// checkpointed tape's recomputation (unit by unit, from each checkpoint) gives the fully taped
// gradient to rounding.
void make_sparse(Problem& pr, double fraction, std::uint64_t seed) {
  for (auto& p : pr.layers) {
    p.keep_random_connections(fraction, fraction, seed++);
    p.sparse = true;
  }
}

egret::Matrix<double> as_column(const std::vector<double>& v) {
  return Eigen::Map<const egret::Matrix<double>>(v.data(), static_cast<Index>(v.size()), 1);
}

// Relative error of a parameter's gradient as a whole: max |a - b| <= rel * max |b|.
void expect_close(const egret::Matrix<double>& a, const egret::Matrix<double>& b, double rel,
                  const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  const double err = (a - b).cwiseAbs().maxCoeff(), scale = b.cwiseAbs().maxCoeff();
  EXPECT_LE(err, rel * scale) << what << ": relative error " << err / scale;
}

TEST(SparseConnectivity, SameEventsAndGradientAsTheDenseLayerOnTheConnections) {
  Problem sparse = random_problem(71, {24, 10}, 6, 60.0);
  make_sparse(sparse, 0.3, 5);
  Problem dense = sparse;
  for (auto& p : dense.layers) p.sparse = false;
  const auto rs = run(sparse, true), rd = run(dense, true);
  ASSERT_TRUE(rs.report.ok()) << rs.report.first_problem;
  ASSERT_GE(rs.emitted, 40u) << "scenario too quiet to be a test";
  ASSERT_EQ(rs.events, rd.events);
  EXPECT_NEAR(rs.loss, rd.loss, 1e-12 * std::abs(rd.loss));
  std::size_t absent = 0, dense_nonzero = 0;
  for (std::size_t l = 0; l < sparse.layers.size(); ++l) {
    const P& p = sparse.layers[l];
    for (const char* name : {"U_u", "U_r", "U_z", "V_u", "V_r", "V_z"}) {
      const auto& gs = rs.grad.layers[l].at(name, "test");
      const auto& gd = rd.grad.layers[l].at(name, "test");
      const auto& w = std::string(name)[0] == 'U' ? p.U_u : p.V_u;
      egret::Matrix<double> gd_on_connections = gd;
      for (Index i = 0; i < w.rows(); ++i)
        for (Index j = 0; j < w.cols(); ++j)
          if (w(i, j) == 0) {
            ++absent;
            dense_nonzero += gd(i, j) != 0;
            EXPECT_EQ(gs(i, j), 0) << name << "(" << i << "," << j << ") is no connection";
            gd_on_connections(i, j) = 0;
          }
      expect_close(gs, gd_on_connections, 1e-12, "layer " + std::to_string(l) + " " + name);
    }
    for (const char* name : {"b_u", "b_r", "b_z", "theta", "tau_m", "tau_o", "c_init"})
      expect_close(rs.grad.layers[l].at(name, "test"), rd.grad.layers[l].at(name, "test"), 1e-12,
                   "layer " + std::to_string(l) + " " + name);
  }
  EXPECT_GT(absent, 1000u);
  EXPECT_GT(dense_nonzero, absent / 4) << "the dense layer should give absent weights gradients";
  expect_close(rs.grad.W_o, rd.grad.W_o, 1e-12, "W_o");
  expect_close(as_column(rs.grad.input_time), as_column(rd.grad.input_time), 1e-12, "input_time");
  expect_close(as_column(rs.grad.input_value), as_column(rd.grad.input_value), 1e-12,
               "input_value");

  // Checkpoints every step, every 2nd, 5th and 7th, automatic, and one for the whole run.
  for (std::int64_t k : {1, 2, 5, 7, 0, 100000}) {
    Problem q = sparse;
    q.checkpoint_every = k;
    const auto rk = run(q, true);
    const std::string K = "K = " + std::to_string(k) + " ";
    for (std::size_t l = 0; l < q.layers.size(); ++l)
      for (const auto& e : rs.grad.layers[l])
        expect_close(rk.grad.layers[l].at(e.spec.name, "test"), e.value, 1e-12, K + e.spec.name);
    expect_close(as_column(rk.grad.input_time), as_column(rs.grad.input_time), 1e-12,
                 K + "input_time");
  }
}

// Binned inputs (many at one time), releases at the same times as inputs, held windows: a unit
// touched by several steps at one time has pieces of length 0 between them, whose time terms
// still count. The sparse layer's gradient is the dense layer's to rounding, with and without
// the input time adjoints (training discards them).
TEST(SparseConnectivity, SimultaneousStepsGiveTheDenseGradient) {
  for (const bool held : {false, true}) {
    SCOPED_TRACE(held ? "held windows" : "finite windows");
    Problem sparse = random_problem(91, {20, 8}, 6, 60.0);
    for (auto& e : sparse.input) e.time = 4 * std::ceil(e.time / 4);
    for (auto& p : sparse.layers) {
      if (held) p.window_input = p.window_recurrent = std::numeric_limits<double>::infinity();
      if (!held) p.window_input = 4;  // releases at the next bin, with its inputs
    }
    make_sparse(sparse, 0.3, 13);
    for (const bool input_times : {true, false}) {
      sparse.input_time_adjoints = input_times;
      Problem dense = sparse;
      for (auto& p : dense.layers) p.sparse = false;
      const auto rs = run(sparse, true), rd = run(dense, true);
      ASSERT_TRUE(rs.report.ok()) << rs.report.first_problem;
      ASSERT_GE(rs.emitted, 30u) << "scenario too quiet to be a test";
      ASSERT_EQ(rs.events, rd.events);
      for (std::size_t l = 0; l < sparse.layers.size(); ++l)
        for (const auto& e : rd.grad.layers[l]) {
          egret::Matrix<double> expected = e.value;
          const char kind = e.spec.name[0];
          if (kind == 'U' || kind == 'V') {  // the dense layer's gradient on the connections
            const auto& w = kind == 'U' ? sparse.layers[l].U_u : sparse.layers[l].V_u;
            expected = (w.array() == 0).select(0.0, expected);
          }
          expect_close(rs.grad.layers[l].at(e.spec.name, "test"), expected, 1e-12,
                       "layer " + std::to_string(l) + " " + e.spec.name);
        }
      // Per-event input adjoints (times and values) are reported only when asked for.
      EXPECT_EQ(rs.grad.input_time.empty(), !input_times);
      EXPECT_EQ(rs.grad.input_value.empty(), !input_times);
      EXPECT_EQ(rd.grad.input_value.empty(), !input_times);
      if (input_times) {
        expect_close(as_column(rs.grad.input_time), as_column(rd.grad.input_time), 1e-12,
                     "input_time");
        expect_close(as_column(rs.grad.input_value), as_column(rd.grad.input_value), 1e-12,
                     "input_value");
      }
    }
  }
}

// More units than the sparse layer's list of earliest crossings holds
// (EarliestCrossings::kCapacity), 20 of them identical so that they cross together: the sparse
// layer still fires the dense layer's events, the 20 in one step, with the same gradient.
TEST(SparseConnectivity, TiedCrossingsBeyondTheEarliestListGiveTheDenseLayersEvents) {
  Problem sparse = random_problem(73, {80}, 6, 80.0);
  make_sparse(sparse, 0.3, 9);
  P& p = sparse.layers[0];
  const Index tied = 20;
  static_assert(20 > egret::EarliestCrossings<double>::kCapacity);
  for (egret::Matrix<double>* V : {&p.V_u, &p.V_r, &p.V_z})
    for (Index k = 0; k < tied; ++k) (*V)(0, k) = 0;  // the group does not reach itself
  for (Index k = 1; k < tied; ++k) {
    for (egret::Matrix<double>* W : {&p.U_u, &p.U_r, &p.U_z, &p.V_u, &p.V_r, &p.V_z})
      W->row(k) = W->row(0);
    for (egret::Vector<double>* v : {&p.b_u, &p.b_r, &p.b_z, &p.theta, &p.c_init})
      (*v)[k] = (*v)[0];
  }
  p.b_z[0] = 0.9;                     // let the group reach its threshold on its own
  for (Index k = 1; k < tied; ++k) {  // the same dynamics: the same bias and time constant
    p.b_z[k] = p.b_z[0];
    p.tau_m[k] = p.tau_m[0];
  }
  Problem dense = sparse;
  dense.layers[0].sparse = false;
  const auto rs = run(sparse, true), rd = run(dense, true);
  ASSERT_TRUE(rs.report.ok()) << rs.report.first_problem;
  EXPECT_GE(rs.largest_step, tied) << "the tied units should cross together";
  ASSERT_GE(rs.emitted, 100u) << "scenario too quiet to be a test";
  ASSERT_EQ(rs.events, rd.events);
  EXPECT_EQ(rs.emitted, rd.emitted);
  EXPECT_EQ(rs.largest_step, rd.largest_step);
  EXPECT_NEAR(rs.loss, rd.loss, 1e-12 * std::abs(rd.loss));
  for (const char* name : {"b_u", "b_z", "theta", "tau_m"})
    expect_close(rs.grad.layers[0].at(name, "test"), rd.grad.layers[0].at(name, "test"), 1e-12,
                 name);
}

using PF = egret::ContinuousEgruParams<float>;

// A float layer of 64 units and 16 channels, 30 % connected (the weights of a dense layer with
// the zeros of a sparse one).
PF float_layer_with_absent_connections(std::uint64_t seed, std::uint64_t connection_seed) {
  typename PF::RandomInit init;
  init.weight_scale = 1.5f;
  init.bias_z = 0.5f;
  init.bias_spread = 0.3f;
  init.threshold = 0.3f;
  PF p = PF::random(64, 16, seed, init);
  p.tau_m.setConstant(10);
  p.window_input = 5;
  p.window_recurrent = 5;
  p.keep_random_connections(0.3f, 0.3f, connection_seed);
  return p;
}

// In float, where a unit record is one AVX packet wide and the sparse layer gathers the touched
// units' records a packet at a time (SparseEgruUnits::gather_whole_packets), the sparse layer
// fires the dense float layer's events. An event touches about 19 of the 64 units, so most of
// the gather goes through whole packets and the rest through the field-by-field copy.
TEST(SparseConnectivity, FloatLayerFiresTheDenseFloatLayersEvents) {
  PF dense = float_layer_with_absent_connections(42, 3);
  PF sparse = dense;
  sparse.sparse = true;
  const auto input = egret::poisson_input<float>(16, 50.0, 200.0, 7);
  auto events_of = [&](const PF& p) {
    egret::Network<float> net;
    net.add_layer(
        std::make_unique<egret::ContinuousEgruLayer<float>>(std::make_shared<const PF>(p)));
    egret::SimOptions<float> opt;
    opt.end_time = 200;
    return egret::simulate(net, input, opt).trace;
  };
  const auto ts = events_of(sparse), td = events_of(dense);
  ASSERT_GE(td.size(), 400u) << "scenario too quiet to be a test";
  ASSERT_EQ(ts.size(), td.size());
  for (std::size_t i = 0; i < td.size(); ++i) {
    ASSERT_EQ(ts[i].unit, td[i].unit) << "event " << i;
    ASSERT_NEAR(ts[i].time, td[i].time, 1e-5f * td[i].time) << "event " << i;
  }
}

// The float sparse backward pass (its replay computes the touched units' flow and gates a SIMD
// packet at a time, as the forward pass does) gives the float dense layer's gradient to float
// rounding (1e-4 relative), with checkpoints every 7 steps and automatic.
TEST(SparseConnectivity, FloatGradientIsTheDenseFloatGradient) {
  PF dense = float_layer_with_absent_connections(43, 4);
  egret::Readout<float> readout;
  readout.W_o = egret::Matrix<float>::Random(3, 64);
  readout.b_o = egret::Vector<float>::Zero(3);
  const auto stream = egret::poisson_input<float>(16, 50.0, 150.0, 8);
  egret::ReadoutTargets<float> targets;
  targets.labels = {2};
  auto gradient_of = [&](const PF& p, std::int64_t k, std::size_t& emitted) {
    egret::Network<float> net;
    net.add_layer(
        std::make_unique<egret::ContinuousEgruLayer<float>>(std::make_shared<const PF>(p)));
    net.set_readout(readout);
    egret::Tape<float> tape;
    egret::SimOptions<float> opt;
    opt.end_time = 150;
    opt.readout_times = {150};
    opt.tape = &tape;
    opt.tape_checkpoint_every = k;
    const auto fwd = egret::simulate(net, stream, opt);
    emitted = fwd.trace.size();
    const auto loss =
        egret::evaluate_loss(egret::LossKind::kSoftmaxCrossEntropy, fwd.readouts, targets);
    auto grad = egret::zero_gradient(net, stream.size());
    const auto d_o = egret::readout_backward(net, fwd, loss.dlogits, grad);
    const auto report = egret::reverse_sweep(net, tape, fwd, d_o, grad);
    EXPECT_TRUE(report.ok()) << report.first_problem;
    return grad;
  };
  PF sparse = dense;
  sparse.sparse = true;
  std::size_t emitted_dense = 0, emitted_sparse = 0;
  const auto gd = gradient_of(dense, 0, emitted_dense);
  ASSERT_GE(emitted_dense, 200u) << "scenario too quiet to be a test";
  double worst = 0;
  for (std::int64_t k : {7, 0}) {
    const auto gs = gradient_of(sparse, k, emitted_sparse);
    ASSERT_EQ(emitted_sparse, emitted_dense);
    for (const auto& e : gd.layers[0]) {
      egret::Matrix<float> expected = e.value;
      if (e.spec.name[0] == 'U' || e.spec.name[0] == 'V')
        expected = ((e.spec.name[0] == 'U' ? sparse.U_u : sparse.V_u).array() == 0.0f)
                       .select(0.0f, expected);
      const auto& got = gs.layers[0].at(e.spec.name, "test");
      const float err = (got - expected).cwiseAbs().maxCoeff();
      const float scale = expected.cwiseAbs().maxCoeff();
      EXPECT_LE(err, 1e-4f * scale) << "K = " << k << " " << e.spec.name;
      if (scale > 0) worst = std::max(worst, double(err / scale));
    }
  }
  std::printf("  float sparse against float dense: worst relative error %.2e\n", worst);
}

TEST(SparseConnectivity, GradientAgainstFiniteDifferences) {
  FdStats st;
  for (std::uint64_t seed : {81, 82}) {
    Problem pr = random_problem(
        seed, seed == 81 ? std::vector<Index>{16} : std::vector<Index>{12, 6}, 5, 50.0);
    make_sparse(pr, 0.25, seed);
    check_problem(pr, seed, 5, st, 20);
  }
  std::printf("  sparse layers: %d gradients checked, %d skipped, worst relative error %.2e (%s)\n",
              st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 80);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// The state regulariser on sparse layers: each unit's cost over its own pieces of trajectory
// (box_sparse_adjoint.hpp) is the dense layer's to rounding, for every checkpoint spacing (a
// checkpoint splits every unit's piece), and its gradient matches finite differences (steps from
// 1e-6: see AdjointFiniteDifference.StateRegularizer).
TEST(SparseConnectivity, StateRegularizerIsTheDenseLayers) {
  Problem sparse = random_problem(73, {20, 8}, 6, 50.0);
  make_sparse(sparse, 0.3, 7);
  sparse.state.weight = 20.0;
  sparse.state.detach_threshold = false;
  Problem dense = sparse;
  for (auto& p : dense.layers) p.sparse = false;
  const auto rs = run(sparse, true), rd = run(dense, true);
  ASSERT_EQ(rs.events, rd.events);
  ASSERT_GT(rd.report.state_cost, 0.05 * rd.loss);
  EXPECT_NEAR(rs.report.state_cost, rd.report.state_cost, 1e-12 * rd.report.state_cost);
  for (std::int64_t k : {1, 3, 0, 100000}) {
    Problem q = sparse;
    q.checkpoint_every = k;
    const auto rk = run(q, true);
    const std::string K = "K = " + std::to_string(k) + " ";
    EXPECT_NEAR(rk.report.state_cost, rd.report.state_cost, 1e-12 * rd.report.state_cost) << K;
    for (std::size_t l = 0; l < q.layers.size(); ++l)
      for (const char* name : {"b_u", "b_r", "b_z", "theta", "tau_m", "c_init"})
        expect_close(rk.grad.layers[l].at(name, "test"), rd.grad.layers[l].at(name, "test"), 1e-11,
                     K + "layer " + std::to_string(l) + " " + name);
    expect_close(as_column(rk.grad.input_time), as_column(rd.grad.input_time), 1e-11,
                 K + "input_time");
  }
  FdStats st;
  for (std::uint64_t seed : {83, 84}) {
    Problem pr = random_problem(
        seed, seed == 83 ? std::vector<Index>{16} : std::vector<Index>{12, 6}, 5, 50.0);
    make_sparse(pr, 0.25, seed);
    pr.state.weight = 20.0;
    pr.state.detach_threshold = false;
    check_problem(pr, seed, 5, st, 20, 1e-6, 1e-6);
  }
  std::printf(
      "  sparse, state regularizer: %d checked, %d skipped, worst relative error %.2e (%s)\n",
      st.checked, st.skipped, st.worst, st.worst_name.c_str());
  EXPECT_GT(st.checked, 80);
  EXPECT_LT(st.skipped, st.checked / 10);
}

// With the exp gate kernel a sparse layer's units are integrated densely (the weights' zeros
// are no connections and get no gradient): finite differences on the connections, and exactly 0
// on the absent ones.
TEST(SparseConnectivity, ExpGateKernelGradientOnTheConnections) {
  FdStats st;
  Problem pr = exp_kernel_problem(83, {10, 5}, false);
  make_sparse(pr, 0.4, 83);
  check_problem(pr, 83, 5, st, 15, 1e-5);
  const auto r = run(pr, true);
  std::size_t absent = 0;
  for (std::size_t l = 0; l < pr.layers.size(); ++l)
    for (const char* name : {"U_u", "U_r", "U_z", "V_u", "V_r", "V_z"}) {
      const auto& w = std::string(name)[0] == 'U' ? pr.layers[l].U_u : pr.layers[l].V_u;
      const auto& g = r.grad.layers[l].at(name, "test");
      for (Index i = 0; i < w.rows(); ++i)
        for (Index j = 0; j < w.cols(); ++j)
          if (w(i, j) == 0) {
            ++absent;
            EXPECT_EQ(g(i, j), 0) << name << "(" << i << "," << j << ") is no connection";
          }
    }
  std::printf(
      "  sparse exp layers: %d gradients checked, %d skipped, worst relative error %.2e "
      "(%s); %zu absent weights, gradient 0\n",
      st.checked, st.skipped, st.worst, st.worst_name.c_str(), absent);
  EXPECT_GT(st.checked, 80);
  EXPECT_GT(absent, 100u);
}

// ---- Ties: units that cross together, an input at a crossing time (docs/adjoint.md §6).

// Units `tied` of a layer made identical (every weight row, bias, threshold, initial state and
// time constant of the first), so that they cross together. `cross`: the weight of each tied
// unit's event on the other tied units (V_u, V_z; 0: they do not interact), and whether their
// events reach the layer's other units (random weights) or only the readout.
void tie_units(P& p, const std::vector<Index>& tied, double cross, bool reach_others,
               std::uint64_t seed) {
  const Index t0 = tied[0];
  for (const Index t : tied) {
    for (egret::Matrix<double>* W : {&p.U_u, &p.U_r, &p.U_z, &p.V_u, &p.V_r, &p.V_z})
      W->row(t) = W->row(t0);
    for (egret::Vector<double>* v :
         {&p.b_u, &p.b_r, &p.b_z, &p.theta, &p.c_init, &p.tau_m, &p.tau_s})
      if (v->size() > 0) (*v)[t] = (*v)[t0];
    p.b_z[t] = 0.9;  // let the group reach its threshold on its own
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-0.6, 0.6);
  for (egret::Matrix<double>* V : {&p.V_u, &p.V_r, &p.V_z})
    for (const Index t : tied)
      for (Index m = 0; m < p.units(); ++m) {
        const bool is_tied = std::find(tied.begin(), tied.end(), m) != tied.end();
        const double w = is_tied ? (m == t || V == &p.V_r ? 0.0 : cross)
                                 : (reach_others && (!p.sparse || (*V)(m, t) != 0) ? U(rng) : 0.0);
        (*V)(m, t) = w;
      }
}

// The parameters of the tied units that a sampled set may miss.
std::vector<Param> tied_unit_parameters(const std::vector<Index>& tied) {
  std::vector<Param> out;
  for (const Index t : tied)
    for (const char* name : {"b_u", "b_z", "theta", "tau_m"}) {
      const std::string n = name;
      out.push_back(
          {"layer0." + n + "(" + std::to_string(t) + ")",
           [=](Problem& q) -> double& {
             P& p = q.layers[0];
             return n == "b_u"     ? p.b_u[t]
                    : n == "b_z"   ? p.b_z[t]
                    : n == "theta" ? p.theta[t]
                                   : p.tau_m[t];
           },
           [=](const egret::Gradient<double>& g) { return g.layers[0].at(n, "test")(t, 0); }});
    }
  return out;
}

// The kinds of layer the tie tests run on, and a random problem of that kind.
struct TieCase {
  const char* name;
  bool exp, sparse, state_cost;
};
const TieCase kTieCases[] = {{"box", false, false, false},
                             {"box, state cost", false, false, true},
                             {"exp", true, false, false},
                             {"box sparse", false, true, false}};

Problem tie_problem(const TieCase& c, std::uint64_t seed, std::vector<Index> units, Index channels,
                    double end) {
  Problem pr = c.exp ? exp_kernel_problem(seed, std::move(units), false)
                     : random_problem(seed, std::move(units), channels, end);
  if (c.sparse) make_sparse(pr, 0.6, seed);
  if (c.state_cost) {
    pr.state.weight = 5.0;
    pr.state.margin = 0.05;
    pr.state.detach_threshold = false;
  }
  return pr;
}

// Tied units whose events reach only the readout: the loss is smooth where a perturbation
// separates them, and every unit's gradient is its own (before the fix, the whole group's went
// to the first unit's guard: b_z of the third unit had 0 against a finite difference of 0.19).
TEST(AdjointFiniteDifference, TiedCrossingsOfUnitsThatReachOnlyTheReadout) {
  for (const TieCase& c : kTieCases) {
    SCOPED_TRACE(c.name);
    FdStats st;
    for (std::uint64_t seed : {201, 202}) {  // a tie of three units, and one of two
      Problem pr = tie_problem(c, seed, {6}, 4, 40.0);
      const std::vector<Index> tied =
          seed == 201 ? std::vector<Index>{1, 3, 4} : std::vector<Index>{2, 5};
      tie_units(pr.layers[0], tied, 0.0, false, seed);
      pr.tie_group_width = 1e-3;
      pr.tied_units = tied;
      const ::Run r = run(pr, true);
      ASSERT_GE(r.largest_step, static_cast<std::int64_t>(tied.size()))
          << "the tied units should cross together";
      EXPECT_GT(r.report.simultaneous_crossings, 0);
      check_problem(pr, seed, 3, st, 15, c.exp ? 1e-5 : 1e-6, c.state_cost ? 1e-6 : 1e-4,
                    tied_unit_parameters(tied));
    }
    std::printf("  tied crossings (%s): %d gradients checked, %d skipped, worst %.2e (%s)\n",
                c.name, st.checked, st.skipped, st.worst, st.worst_name.c_str());
    EXPECT_GT(st.checked, 60);
    EXPECT_LT(st.skipped, st.checked / 10);
  }
}

// Every gradient of `a` against `b`, each parameter as a whole (expect_close), inputs included.
void expect_same_gradient(const Run& a, const Run& b, double rel) {
  ASSERT_EQ(a.grad.layers.size(), b.grad.layers.size());
  for (std::size_t l = 0; l < b.grad.layers.size(); ++l)
    for (const auto& e : b.grad.layers[l])
      if (e.value.cwiseAbs().maxCoeff() > 0)
        expect_close(a.grad.layers[l].at(e.spec.name, "test"), e.value, rel,
                     "layer " + std::to_string(l) + " " + e.spec.name);
  expect_close(a.grad.W_o, b.grad.W_o, rel, "W_o");
  expect_close(a.grad.b_o, b.grad.b_o, rel, "b_o");
  if (!b.grad.input_time.empty()) {
    expect_close(as_column(a.grad.input_time), as_column(b.grad.input_time), rel, "input_time");
    expect_close(as_column(a.grad.input_value), as_column(b.grad.input_value), rel, "input_value");
  }
}

// Tied units that act on each other and on the rest of the network (and on a second layer): the
// loss has a kink where they separate, and the gradient is the derivative from the side where
// they cross in index order. It must be the limit of the gradient of crossings 1e-9 ms apart in
// that order (each later unit's b_z lowered by 1e-9 per place), which the ordinary,
// finite-difference-checked path computes.
TEST(AdjointFiniteDifference, TiedCrossingsAreTheLimitOfCrossingsInIndexOrder) {
  struct Case {
    TieCase kind;
    std::vector<Index> units;
  };
  for (const Case& c :
       {Case{kTieCases[0], {6}}, Case{kTieCases[0], {6, 4}}, Case{kTieCases[1], {6}},
        Case{kTieCases[2], {6}}, Case{kTieCases[2], {6, 3}}, Case{kTieCases[3], {6, 4}}}) {
    SCOPED_TRACE(std::string(c.kind.name) + ", " + std::to_string(c.units.size()) + " layer(s)");
    for (std::uint64_t seed : {211, 212}) {
      Problem pr = tie_problem(c.kind, seed, c.units, 4, 40.0);
      const std::vector<Index> tied = {0, 2, 5};
      tie_units(pr.layers[0], tied, 0.3, true, seed);
      Problem apart = pr;
      for (std::size_t k = 1; k < tied.size(); ++k)
        apart.layers[0].b_z[tied[k]] -= 1e-9 * static_cast<double>(k);
      pr.tie_group_width = apart.tie_group_width = 1e-6;
      ::Run r_tied = run(pr, true), r_apart = run(apart, true);
      ASSERT_TRUE(r_tied.report.ok()) << r_tied.report.first_problem;
      ASSERT_GE(r_tied.largest_step, 3) << "the tied units should cross together";
      ASSERT_EQ(r_tied.events, r_apart.events) << "the same events, the tie apart";
      ASSERT_GE(r_tied.emitted, 15u) << "scenario too quiet to be a test";
      EXPECT_NEAR(r_tied.loss, r_apart.loss, 1e-6 * std::abs(r_apart.loss));
      // The forward pass gives every tied unit's event the reset gate r from before the step
      // (its aux): V_r between tied units (0 here) reaches r only after the step, where in order
      // it would reach the later units' r first. Those entries are the derivative of the forward
      // pass as it is, not of the limit; the jump adjoint they come from is checked elsewhere.
      for (::Run* r : {&r_tied, &r_apart})
        for (const Index i : tied)
          for (const Index j : tied) r->grad.layers[0].at("V_r", "test")(i, j) = 0;
      expect_same_gradient(r_tied, r_apart, c.kind.exp ? 1e-5 : 1e-6);
    }
  }
}

// An input that arrives exactly when a unit reaches theta: the crossing is timed from the input's
// step with the unit already at theta (dt* = 0). Its gradient must be the limit of the input
// arriving 1e-9 ms before (or after, when the forward pass took the crossing first); before the
// fix, a crossing whose c had rounded to theta or above had no dependence on the state.
TEST(AdjointFiniteDifference, AnInputAtACrossingTimeIsTheLimitOfAnInputJustBefore) {
  for (const TieCase& c : kTieCases) {
    SCOPED_TRACE(c.name);
    Problem base = tie_problem(c, 221, {5, 3}, 3, 30.0);
    base.tie_group_width = 1e-6;
    egret::Tape<double> tape;
    {
      auto net = build(base);
      egret::InputStream<double> input(base.input, base.channels);
      egret::SimOptions<double> opt;
      opt.end_time = base.end;
      opt.tape = &tape;
      egret::simulate(net, input, opt);
    }
    int checked = 0, first_input = 0;
    for (const auto& st : tape.steps) {
      if (checked == 8) break;
      if (st.layer != 0 || st.kind != egret::EventKind::kInternal) continue;
      const Index m = tape.items[static_cast<std::size_t>(st.first_item)].index;
      // The channel that pushes the unit's candidate up the most: the crossing survives the input.
      Index j = 0;
      base.layers[0].U_z.row(m).maxCoeff(&j);
      Problem at = base;
      at.input.push_back({st.time, j, 1.0});
      std::stable_sort(at.input.begin(), at.input.end(),
                       [](const auto& a, const auto& b) { return a.time < b.time; });
      const auto added = static_cast<std::size_t>(
          std::find_if(at.input.begin(), at.input.end(),
                       [&](const auto& e) { return e.time == st.time && e.channel == j; }) -
          at.input.begin());
      const ::Run r_at = run(at, true);
      // Which the forward pass took first at that time: the input, or the crossing.
      bool input_first = false;
      for (const auto& [time, kind, layer] : r_at.steps)
        if (layer == 0 && time == st.time) {
          input_first = kind == egret::EventKind::kInput;
          break;
        }
      Problem near = at;
      near.input[added].time += input_first ? -1e-9 : 1e-9;
      const ::Run r_near = run(near, true);
      if (r_at.events != r_near.events) continue;  // the input moved an event: no limit
      SCOPED_TRACE("crossing at t = " + std::to_string(st.time) +
                   (input_first ? ", input first" : ", crossing first"));
      ASSERT_TRUE(r_at.report.ok()) << r_at.report.first_problem;
      expect_same_gradient(r_at, r_near, c.exp ? 1e-5 : 1e-6);
      ++checked;
      first_input += input_first;
    }
    std::printf("  input at a crossing time (%s): %d checked, %d with the input first\n", c.name,
                checked, first_input);
    EXPECT_GE(checked, 5);
    EXPECT_GE(first_input, 1);
  }
}

// The single-unit derivatives of the first crossing time t* = (tau/u) ln((z - c0)/(z - theta))
// against central differences of the formula itself.
TEST(AdjointFiniteDifference, CrossingTimePartials) {
  using Cell = egret::BoxEgruCell<double>;
  const double c0 = -0.2, u = 0.4, z = 0.8, th = 0.5, tau = 7.0;
  const double t = Cell::time_to_crossing(c0, u, z, th, tau);
  const auto d = Cell::crossing_partials(c0, u, z, th, tau, t);
  auto fd = [&](int which) {
    const double h = 1e-6;
    auto f = [&](double e) {
      double a[5] = {c0, u, z, th, tau};
      a[which] += e;
      return Cell::time_to_crossing(a[0], a[1], a[2], a[3], a[4]);
    };
    return (f(h) - f(-h)) / (2 * h);
  };
  EXPECT_NEAR(d.c0, fd(0), 1e-7 * std::abs(d.c0));
  EXPECT_NEAR(d.u, fd(1), 1e-7 * std::abs(d.u));
  EXPECT_NEAR(d.z, fd(2), 1e-7 * std::abs(d.z));
  EXPECT_NEAR(d.theta, fd(3), 1e-7 * std::abs(d.theta));
  EXPECT_NEAR(d.tau_m, fd(4), 1e-7 * std::abs(d.tau_m));
  // And the closed forms of the derivative w.r.t. theta, z, u, tau_m written out:
  EXPECT_NEAR(d.theta, (tau / u) / (z - th), 1e-14);
  EXPECT_NEAR(d.z, (tau / u) * (1 / (z - c0) - 1 / (z - th)), 1e-14);
  EXPECT_NEAR(d.u, -(tau / (u * u)) * std::log((z - c0) / (z - th)), 1e-12);
  EXPECT_NEAR(d.tau_m, (1 / u) * std::log((z - c0) / (z - th)), 1e-13);
}

}  // namespace
