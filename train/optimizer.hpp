// Optimizers on a flat parameter vector: plain SGD and Adam (Kingma & Ba 2015, with bias
// correction), and global-norm gradient clipping.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace egret {

struct OptimizerConfig {
  std::string kind = "adam";  // "adam" or "sgd"
  double learning_rate = 1e-2;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // Adam
  double clip_norm = 0;                               // > 0: clip the gradient's global norm
};

// Scales g so that its Euclidean norm is at most max_norm; returns the norm before clipping.
template <class Scalar>
double clip_global_norm(std::vector<Scalar>& g, double max_norm) {
  double sq = 0;
  for (Scalar v : g) sq += static_cast<double>(v) * static_cast<double>(v);
  const double norm = std::sqrt(sq);
  if (max_norm > 0 && norm > max_norm) {
    const Scalar s = static_cast<Scalar>(max_norm / norm);
    for (Scalar& v : g) v *= s;
  }
  return norm;
}

template <class Scalar>
class Optimizer {
 public:
  Optimizer() = default;
  Optimizer(const OptimizerConfig& cfg, std::size_t n) : cfg_(cfg) {
    if (cfg.kind != "adam" && cfg.kind != "sgd")
      throw std::invalid_argument("optimizer: unknown kind '" + cfg.kind + "' (adam, sgd)");
    if (!(cfg.learning_rate > 0) || !std::isfinite(cfg.learning_rate))
      throw std::invalid_argument("optimizer: learning_rate must be finite and > 0");
    if (cfg.kind == "adam") {
      if (!(cfg.beta1 >= 0 && cfg.beta1 < 1) || !(cfg.beta2 >= 0 && cfg.beta2 < 1) ||
          !(cfg.epsilon > 0))
        throw std::invalid_argument("optimizer: Adam needs 0 <= beta1, beta2 < 1 and epsilon > 0");
      m_.assign(n, 0);
      v_.assign(n, 0);
    }
  }

  // x <- x - lr * step(g)
  void step(std::vector<Scalar>& x, const std::vector<Scalar>& g) {
    if (g.size() != x.size()) throw std::invalid_argument("optimizer: gradient size mismatch");
    ++t_;
    const double lr = cfg_.learning_rate;
    if (cfg_.kind == "sgd") {
      for (std::size_t i = 0; i < x.size(); ++i) x[i] -= static_cast<Scalar>(lr * g[i]);
      return;
    }
    const double b1 = cfg_.beta1, b2 = cfg_.beta2;
    const double c1 = 1 - std::pow(b1, static_cast<double>(t_));
    const double c2 = 1 - std::pow(b2, static_cast<double>(t_));
    for (std::size_t i = 0; i < x.size(); ++i) {
      m_[i] = b1 * m_[i] + (1 - b1) * g[i];
      v_[i] = b2 * v_[i] + (1 - b2) * static_cast<double>(g[i]) * g[i];
      const double mhat = m_[i] / c1, vhat = v_[i] / c2;
      x[i] -= static_cast<Scalar>(lr * mhat / (std::sqrt(vhat) + cfg_.epsilon));
    }
  }

  std::int64_t steps() const { return t_; }
  // State for checkpoints: first and second moments, step count.
  const std::vector<double>& first_moment() const { return m_; }
  const std::vector<double>& second_moment() const { return v_; }
  void restore(std::vector<double> m, std::vector<double> v, std::int64_t t) {
    if (cfg_.kind == "adam" && (m.size() != m_.size() || v.size() != v_.size()))
      throw std::invalid_argument("optimizer: checkpoint state has the wrong size");
    m_ = std::move(m);
    v_ = std::move(v);
    t_ = t;
  }
  const OptimizerConfig& config() const { return cfg_; }
  // Coordinates that were reset (pruned weights): their moments start again from 0, so a
  // coordinate whose gradient stays 0 is not moved by what Adam remembered.
  void forget(const std::vector<std::size_t>& coordinates) {
    for (std::size_t i : coordinates) {
      if (i < m_.size()) m_[i] = 0;
      if (i < v_.size()) v_[i] = 0;
    }
  }

 private:
  OptimizerConfig cfg_;
  std::vector<double> m_, v_;
  std::int64_t t_ = 0;
};

}  // namespace egret
