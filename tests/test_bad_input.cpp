// Bad input gets a clear error naming the problem: NaN or infinite times, negative times,
// channels out of range, non-finite values, non-positive thresholds or time constants,
// impossible initial states, mismatched shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "models/continuous_egru_layer.hpp"
#include "models/discrete_egru_layer.hpp"
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
    expect_error([&] { make(p); }, {"theta[1]", "must be > 0"});
    p.theta[1] = -0.5;
    expect_error([&] { make(p); }, {"theta[1]", "must be > 0"});
    p.theta[1] = kNaN;
    expect_error([&] { make(p); }, {"theta", "NaN"});
  }
  {
    P p = P::zeros(3, 2);
    p.tau_m = 0;
    expect_error([&] { make(p); }, {"tau_m", "finite and > 0"});
    p.tau_m = -1;
    expect_error([&] { make(p); }, {"tau_m"});
    p.tau_m = kInf;
    expect_error([&] { make(p); }, {"tau_m"});
  }
  {
    P p = P::zeros(3, 2);
    p.tau_o = 0;
    expect_error([&] { make(p); }, {"tau_o"});
  }
  {
    P p = P::zeros(3, 2);
    p.window_input = 0;
    expect_error([&] { make(p); }, {"window_input", "> 0"});
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
