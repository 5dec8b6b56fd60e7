// The baseline for the discrete EGRU benchmark: a standard dense GRU step that computes every
// matrix product (W x and R h for all three gates) with Eigen, whatever the activity.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>

namespace egret::bench {

template <class Scalar>
class DenseGru {
 public:
  using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  DenseGru(Eigen::Index units, Eigen::Index inputs, std::uint64_t seed) : n_(units) {
    std::mt19937_64 rng(seed);
    auto fill = [&rng](Mat& m, Scalar s) {
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        for (Eigen::Index i = 0; i < m.rows(); ++i)
          m(i, j) = s * static_cast<Scalar>(static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0);
    };
    W_.resize(3 * units, inputs);
    R_.resize(3 * units, units);
    fill(W_, Scalar(1) / std::sqrt(Scalar(inputs)));
    fill(R_, Scalar(1) / std::sqrt(Scalar(units)));
    b_x_.setZero(3 * units);
    b_h_.setZero(3 * units);
    h_.setZero(units);
    gx_.resize(3 * units);
    gh_.resize(3 * units);
  }

  // r = sigma(W_r x + R_r h + b), z = sigma(W_z x + R_z h + b),
  // n = tanh(W_n x + b + r * (R_n h + b)), h = (1 - z) n + z h.
  void step(const Vec& x) {
    gx_.noalias() = W_ * x;
    gx_ += b_x_;
    gh_.noalias() = R_ * h_;
    gh_ += b_h_;
    const auto n = n_;
    auto sig = [](auto a) { return (Scalar(1) + (-a).exp()).inverse(); };
    const Eigen::Array<Scalar, Eigen::Dynamic, 1> rg = sig((gx_.head(n) + gh_.head(n)).array());
    const Eigen::Array<Scalar, Eigen::Dynamic, 1> zg =
        sig((gx_.segment(n, n) + gh_.segment(n, n)).array());
    const Eigen::Array<Scalar, Eigen::Dynamic, 1> cand =
        (gx_.tail(n).array() + rg * gh_.tail(n).array()).tanh();
    h_.array() = (Scalar(1) - zg) * cand + zg * h_.array();
  }

  const Vec& state() const { return h_; }

 private:
  Eigen::Index n_;
  Mat W_, R_;
  Vec b_x_, b_h_, h_, gx_, gh_;
};

}  // namespace egret::bench
