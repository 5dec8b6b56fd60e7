// The README's C++ example, built with the project so that it stays correct.
#include <cstdio>

#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

int main() {
  using P = egret::ContinuousEgruParams<double>;
  P p = P::random(/*units=*/64, /*inputs=*/16, /*seed=*/1, P::RandomInit{});
  p.tau_m.setConstant(10);
  p.window_input = 5;
  p.window_recurrent = 5;
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  egret::InputStream<double> input({{1.0, 3, 1.0}, {2.5, 7, 1.0}}, /*channels=*/16);
  egret::SimOptions<double> opt;
  opt.end_time = 100;
  opt.readout_times = {100};
  auto result = egret::simulate(net, input, opt);  // result.trace, .layers, .readouts
  std::printf("%zu events emitted; first at t = %.6f ms by unit %lld\n", result.trace.size(),
              result.trace.empty() ? 0.0 : result.trace[0].time,
              result.trace.empty() ? -1LL : static_cast<long long>(result.trace[0].unit));
  return 0;
}
