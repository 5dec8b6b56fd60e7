// Bad input gets a clear error naming the problem: NaN or infinite times, negative times,
// channels out of range, non-finite values, non-positive thresholds or time constants,
// impossible initial states, mismatched shapes.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "io/config/network_config.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using P = egret::ContinuousEgruParams<double>;
using D = egret::DiscreteEgruParams<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs f, expects std::invalid_argument whose message contains every fragment.
template <class F>
void expect_error(F&& f, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected one mentioning " << *fragments.begin();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const char* frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos)
          << "message: '" << msg << "' lacks '" << frag << "'";
  }
}

TEST(BadInput, InputEventTimesChannelsValues) {
  expect_error(
      [] {
        egret::InputStream<double>({{1.0, 0, 1.0}, {kNaN, 0, 1.0}}, 2);
      },
      {"event 1", "time is not finite"});
  expect_error([] { egret::InputStream<double>({{kInf, 0, 1.0}}, 2); }, {"event 0", "not finite"});
  expect_error([] { egret::InputStream<double>({{-1.0, 0, 1.0}}, 2); }, {"time is negative"});
  expect_error(
      [] {
        egret::InputStream<double>({{1.0, 2, 1.0}}, 2);
      },
      {"channel out of range [0, 2)"});
  expect_error([] { egret::InputStream<double>({{1.0, -1, 1.0}}, 2); }, {"channel out of range"});
  expect_error([] { egret::InputStream<double>({{1.0, 0, kNaN}}, 2); }, {"value is not finite"});
  expect_error([] { egret::InputStream<double>({}, 0); }, {"channels must be positive"});
}

TEST(BadInput, ImpossibleParameters) {
  auto make = [](P p) { egret::ContinuousEgruLayer<double> l(std::make_shared<P>(std::move(p))); };
  {
    P p = P::zeros(3, 2);
    p.theta[1] = 0;
    expect_error([&] { make(p); }, {"theta[1]: 0 is outside [1e-06, inf) (a threshold)"});
    p.theta[1] = -0.5;
    expect_error([&] { make(p); }, {"theta[1]: -0.5 is outside [1e-06, inf) (a threshold)"});
    p.theta[1] = kNaN;
    expect_error([&] { make(p); }, {"theta", "NaN"});
  }
  {
    P p = P::zeros(3, 2);
    p.tau_m[1] = 0;  // one unit's own time constant: named with its index
    expect_error([&] { make(p); }, {"tau_m[1]: 0 is outside [0.001, inf) (a time scale [ms])"});
    p.tau_m[1] = -1;
    expect_error([&] { make(p); }, {"tau_m[1]"});
    p.tau_m[1] = kInf;
    expect_error([&] { make(p); }, {"tau_m"});
    p.tau_m.setConstant(4, 10);  // one value per unit: 3 of them
    expect_error([&] { make(p); }, {"tau_m has shape 4x1, expected 3x1"});
  }
  {
    P p = P::zeros(3, 2);
    p.tau_o[2] = 0;
    expect_error([&] { make(p); }, {"tau_o[2]"});
  }
  {
    P p = P::zeros(3, 2);
    p.window_input = 0;
    expect_error([&] { make(p); }, {"window_input: 0 is outside [0.001, inf] (a time scale [ms])"});
    p.window_input = kInf;  // allowed: held forever
    EXPECT_NO_THROW(make(p));
    p.window_recurrent = kNaN;
    expect_error([&] { make(p); }, {"window_recurrent"});
  }
  {
    P p = P::zeros(3, 2, 0.5);
    p.c_init[2] = 0.5;
    expect_error([&] { make(p); }, {"c_init[2]", "below its threshold"});
  }
  {
    P p = P::zeros(3, 2);
    p.V_z(1, 1) = kNaN;
    expect_error([&] { make(p); }, {"V_z", "NaN or infinite"});
  }
  {
    D d = D::zeros(3, 2);
    d.dt = 0;
    expect_error([&] { egret::DiscreteEgruLayer<double> l(std::make_shared<D>(d)); }, {"dt"});
  }
}

TEST(BadInput, MismatchedShapes) {
  auto make = [](P p) { egret::ContinuousEgruLayer<double> l(std::make_shared<P>(std::move(p))); };
  {
    P p = P::zeros(3, 2);
    p.U_r.resize(3, 4);
    p.U_r.setZero();
    expect_error([&] { make(p); }, {"U_r has shape 3x4, expected 3x2"});
  }
  {
    P p = P::zeros(3, 2);
    p.V_u.resize(2, 3);
    p.V_u.setZero();
    expect_error([&] { make(p); }, {"V_u has shape 2x3, expected 3x3"});
  }
  {
    P p = P::zeros(3, 2);
    p.b_z.resize(4);
    p.b_z.setZero();
    expect_error([&] { make(p); }, {"b_z has shape 4x1, expected 3x1"});
  }
  // Layers that do not fit together.
  egret::Network<double> net;
  net.add_layer(
      std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(P::zeros(3, 2))));
  expect_error(
      [&] {
        net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(
            std::make_shared<P>(P::zeros(4, 5))));
      },
      {"layer 1", "expects 5 inputs", "layer 0 has 3 units"});
  // Readout of the wrong width.
  egret::Readout<double> ro;
  ro.W_o.setZero(2, 4);
  ro.b_o.setZero(2);
  expect_error([&] { net.set_readout(ro); }, {"readout W_o is 2x4", "C x 3"});
  // Input stream with the wrong number of channels.
  egret::SimOptions<double> opt;
  opt.end_time = 1;
  expect_error([&] { egret::simulate(net, egret::InputStream<double>({}, 3), opt); },
               {"3 channels", "expects 2"});
}

// Time scales and thresholds far below any physical scale give event rates with no useful
// bound: refused with the value and the documented minimum (models/egru/egru_weights.hpp).
TEST(BadInput, UnphysicalTimeScalesAndThresholds) {
  auto make = [](P p) { egret::ContinuousEgruLayer<double> l(std::make_shared<P>(std::move(p))); };
  auto make_d = [](D p) { egret::DiscreteEgruLayer<double> l(std::make_shared<D>(std::move(p))); };
  const std::pair<const char*, std::function<double&(P&)>> time_scales[] = {
      {"tau_m[0]", [](P& p) -> double& { return p.tau_m[0]; }},
      {"tau_o[0]", [](P& p) -> double& { return p.tau_o[0]; }},
      {"window_input", [](P& p) -> double& { return p.window_input; }},
      {"window_recurrent", [](P& p) -> double& { return p.window_recurrent; }}};
  for (const auto& [name, field] : time_scales) {
    P p = P::zeros(3, 2);
    field(p) = 1e-12;
    expect_error([&] { make(p); }, {name, ": 1e-12 is outside [0.001, inf", "(a time scale [ms])"});
  }
  {
    P p = P::zeros(3, 2);
    p.theta[2] = 1e-12;
    expect_error([&] { make(p); }, {"theta[2]: 1e-12 is outside [1e-06, inf) (a threshold)"});
    p.theta[2] = 1e-6;
    p.tau_m.setConstant(1e-3);
    p.tau_o.setConstant(1e-3);
    p.window_input = p.window_recurrent = 1e-3;
    make(p);  // the minimums themselves are accepted
  }
  {
    D p = D::zeros(3, 2);
    p.dt = 1e-12;
    expect_error([&] { make_d(p); }, {"dt: 1e-12 is outside [0.001, inf) (a time scale [ms])"});
    p.dt = 1;
    p.tau_o[1] = 1e-12;
    expect_error([&] { make_d(p); }, {"tau_o[1]: 1e-12 is outside [0.001, inf)"});
  }
}

// Every run has an event budget; a network that needs more stops with an error that names it.
TEST(BadInput, EventBudget) {
  P p = P::zeros(2, 1, 0.3);
  p.b_z.setConstant(3);  // z = tanh(3) > theta: each unit fires periodically without input
  p.tau_m.setConstant(1);
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  const egret::InputStream<double> in({}, 1);
  egret::SimOptions<double> opt;
  opt.end_time = 100;
  const auto full = egret::simulate(net, in, opt);
  ASSERT_GT(full.events_processed, 100u);
  opt.max_events = full.events_processed;  // exactly enough
  EXPECT_EQ(egret::simulate(net, in, opt).events_processed, full.events_processed);
  opt.max_events = full.events_processed - 1;
  try {
    egret::simulate(net, in, opt);
    ADD_FAILURE() << "no error for a run beyond its event budget";
  } catch (const egret::EventBudgetExceeded& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("event budget exceeded: " + std::to_string(opt.max_events) + " events"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("max_events"), std::string::npos) << msg;
    // It names the busiest layer and its rate so far (the only layer here).
    EXPECT_NE(msg.find("the busiest layer, 0 (continuous_egru, " + std::to_string(p.units()) +
                       " units), emitted "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(" events per unit per second"), std::string::npos) << msg;
  }
  opt.max_events = 0;
  expect_error([&] { egret::simulate(net, in, opt); },
               {"event budget (max_events) must be positive"});
}

// A tick layer whose ticks alone exceed the budget is refused before the first event (a
// configuration with end_time 5e20 ms and dt 1 ms once ran into the budget only after minutes).
// The message tells the up-front refusal ("would tick") from the loop's budget error ("events
// processed by t"), so the test needs no clock.
TEST(BadInput, TicksBeyondTheEventBudgetAreRefusedUpFront) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 1, "layers": [{"type": "lif", "units": 2, "dt": 0.5}]})", "test");
  auto net = egret::build_network<double>(cfg);
  const egret::InputStream<double> in({}, 1);
  egret::SimOptions<double> opt;
  opt.end_time = 5e20;
  try {
    egret::simulate(net, in, opt);
    ADD_FAILURE() << "no error for 1e21 ticks";
  } catch (const egret::EventBudgetExceeded& e) {
    const std::string msg = e.what();
    for (const char* frag : {"layer 0 (lif) would tick 1e+21 times", "dt = 0.5 ms",
                             "event budget of 100000000", "max_events"})
      EXPECT_NE(msg.find(frag), std::string::npos) << msg;
    EXPECT_EQ(msg.find("events processed"), std::string::npos) << msg;
  }
  opt.end_time = 100;
  opt.max_events = 199;  // 200 ticks
  EXPECT_THROW(egret::simulate(net, in, opt), egret::EventBudgetExceeded);
  opt.max_events = 200;
  EXPECT_EQ(egret::simulate(net, in, opt).layers[0].internal_steps, 200u);
}

// An event-driven layer counts its activity in dense_step bins, indexed by integers; an end_time
// of 5e20 ms at 1 ms bins once overflowed that index (found by the fuzz campaign). Refused up
// front, naming both settings; a layer that is clocked is judged by its ticks instead.
TEST(BadInput, DenseComparisonBinsBeyondExactIntegersAreRefused) {
  egret::Network<double> net;  // zero weights and biases: a quiet layer
  net.add_layer(
      std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(P::zeros(2, 1))));
  const egret::InputStream<double> in({}, 1);
  egret::SimOptions<double> opt;
  opt.end_time = 5e20;
  expect_error([&] { egret::simulate(net, in, opt); },
               {"end_time = 5e+20 ms", "dense_step bins of 1 ms", "layer 0 (continuous_egru)",
                "at most 2^53"});
  opt.dense_step = 1e6;  // 5e14 bins: counted, and the quiet layer runs to the end
  EXPECT_EQ(egret::simulate(net, in, opt).end_time, 5e20);
}

TEST(BadInput, RunOptions) {
  egret::Network<double> net;
  net.add_layer(
      std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(P::zeros(3, 2))));
  const egret::InputStream<double> in({}, 2);
  egret::SimOptions<double> opt;
  opt.end_time = kNaN;
  expect_error([&] { egret::simulate(net, in, opt); }, {"end_time must be finite"});
  opt.end_time = 10;
  opt.readout_times = {11};
  expect_error([&] { egret::simulate(net, in, opt); }, {"readout time 11", "outside"});
  opt.readout_times = {};
  opt.snapshot_times = {kNaN};
  expect_error([&] { egret::simulate(net, in, opt); }, {"snapshot time"});
  egret::Network<double> empty;
  opt.snapshot_times = {};
  expect_error([&] { egret::simulate(empty, in, opt); }, {"no layers"});
}

}  // namespace
