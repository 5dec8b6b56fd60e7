// Arithmetic that keeps clear of subnormal numbers (models/shared/subnormals.hpp; docs/speed.md,
// "Subnormal arithmetic"). The flow's decays E = exp(-u dt / tau_m) (BoxEgruCell::decays,
// advance, decay) against the plain formula exp(u * (-dt / tau_m)) evaluated by Eigen, bitwise,
// over every magnitude of u and of dt / tau_m, in float and double: the decays only skip the
// subnormal intermediates of that formula. The floating-point underflow flag shows the skipping
// itself: the plain formula raises it on units whose u is tiny (a busy input drives a_u far below
// zero), the decays do not. The EGRU gates (EgruGates::gates, clamped exponents) likewise. And
// flush_nearly_subnormal, which the adjoint applies to its adjoints, entry by entry.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/egru/egru_gates.hpp"
#include "models/shared/subnormals.hpp"

namespace {

// Keeps the compiler from moving the computation of `data` across the flag checks.
void barrier(const void* data) {
  asm volatile("" : : "g"(data) : "memory");
}

template <class Scalar>
using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

// u over its whole range: 0, subnormals, every binade from the smallest normal up to 1 (several
// mantissas each), and NaN / inf; one block of kLanes values per packet-sized group.
template <class Scalar>
std::vector<Scalar> every_magnitude_of_u() {
  using L = std::numeric_limits<Scalar>;
  std::vector<Scalar> u = {Scalar(0), L::denorm_min(), L::min() / Scalar(3), L::quiet_NaN(),
                           L::infinity()};
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int e = L::min_exponent - 1; e <= 0; ++e)
    for (int k = 0; k < 6; ++k) u.push_back(static_cast<Scalar>(std::ldexp(mantissa(rng), e - 1)));
  return u;
}

// q = -dt / tau_m from 2^-40 to 2^90 in magnitude, and 0.
template <class Scalar>
std::vector<Scalar> every_magnitude_of_q() {
  std::vector<Scalar> q = {Scalar(0), Scalar(-1)};
  for (int e = -40; e <= 90; e += 5) q.push_back(-static_cast<Scalar>(std::ldexp(1.3, e)));
  return q;
}

template <class Scalar>
bool bitwise_equal(const Array<Scalar>& a, const Array<Scalar>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(Scalar) * a.size()) == 0;
}

template <class Scalar>
void decays_are_the_plain_formula_bitwise() {
  using BoxCell = egret::BoxEgruCell<Scalar>;
  const std::vector<Scalar> us = every_magnitude_of_u<Scalar>();
  const auto n = static_cast<Eigen::Index>(us.size());
  const Array<Scalar> u = Eigen::Map<const Array<Scalar>>(us.data(), n);
  const Array<Scalar> z = Array<Scalar>::LinSpaced(n, Scalar(-1), Scalar(1));
  const Array<Scalar> c0 = Array<Scalar>::LinSpaced(n, Scalar(0.9), Scalar(-0.7));
  for (const Scalar q : every_magnitude_of_q<Scalar>()) {
    // One shared tau_m (a scalar), and a tau_m per unit (an array) with the same q per unit.
    const Scalar tau = Scalar(10), dt = -q * tau;
    const Array<Scalar> taus = Array<Scalar>::Constant(n, tau);
    const Array<Scalar> plain = (u * (-dt / tau)).exp();
    const Array<Scalar> plain_per_unit = (u * (-dt / taus)).exp();
    ASSERT_TRUE(bitwise_equal<Scalar>(BoxCell::decays(u, dt, tau), plain)) << "q = " << q;
    ASSERT_TRUE(bitwise_equal<Scalar>(BoxCell::decays(u, dt, taus), plain_per_unit)) << "q = " << q;
    Array<Scalar> decay(n), c = c0;
    BoxCell::decay(u, dt, taus, decay);
    EXPECT_TRUE(bitwise_equal(decay, plain_per_unit)) << "q = " << q;
    BoxCell::advance(c, u, z, dt, taus);
    const Array<Scalar> expected = c0 + (z - c0) * (Scalar(1) - plain_per_unit);
    EXPECT_TRUE(bitwise_equal(c, expected)) << "q = " << q;
    c = c0;
    BoxCell::advance(c, u, z, dt, tau);
    EXPECT_TRUE(bitwise_equal<Scalar>(c, c0 + (z - c0) * (Scalar(1) - plain))) << "q = " << q;
  }
}

TEST(Decays, EqualThePlainFormulaBitwiseFloat) {
  decays_are_the_plain_formula_bitwise<float>();
}
TEST(Decays, EqualThePlainFormulaBitwiseDouble) {
  decays_are_the_plain_formula_bitwise<double>();
}

// What the replacement of x by 0 relies on: Eigen's exp(x) is exactly 1 below kTinyX, in every
// binade down to the subnormals.
template <class Scalar>
void exp_is_one_below_the_threshold() {
  using Limits = std::numeric_limits<Scalar>;
  const Scalar tiny = egret::detail::DecayExponent<Scalar>::kTinyX;
  std::vector<Scalar> xs = {Scalar(0), -Scalar(0), Limits::denorm_min(), -Limits::denorm_min()};
  for (Scalar x = tiny; x > Limits::min(); x /= Scalar(2))
    for (const Scalar m : {Scalar(1), Scalar(0.99999), Scalar(0.75), Scalar(0.5000001)})
      xs.push_back(x * m), xs.push_back(-x * m);
  const Array<Scalar> x = Eigen::Map<const Array<Scalar>>(xs.data(), xs.size());
  EXPECT_TRUE((x.exp() == Scalar(1)).all());
  // Eight times above it, exp is no longer 1 (the threshold is within a factor 8 of the largest
  // it could be).
  EXPECT_NE((Array<Scalar>::Constant(1, -tiny * Scalar(8)).exp())[0], Scalar(1));
}

TEST(Decays, ExpIsOneBelowTheThreshold) {
  exp_is_one_below_the_threshold<float>();
  exp_is_one_below_the_threshold<double>();
}

// Units of a busy recording: a quarter with u = sigmoid(a_u) for a_u far below zero (1e-38 to
// 1e-6 in float), the rest ordinary, q = -dt / tau_m of ordinary intervals.
template <class Scalar>
Array<Scalar> busy_layer_u(Eigen::Index n, int min_exponent, int max_exponent) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> exponent(min_exponent, max_exponent);
  std::uniform_real_distribution<double> ordinary(0.05, 1.0);
  Array<Scalar> u(n);
  for (Eigen::Index i = 0; i < n; ++i)
    u[i] = static_cast<Scalar>(i % 4 == 0 ? std::ldexp(1.0, exponent(rng)) : ordinary(rng));
  return u;
}

template <class Scalar>
void no_underflow_for_tiny_u(int min_exponent, int max_exponent) {
  using BoxCell = egret::BoxEgruCell<Scalar>;
  const Array<Scalar> u = busy_layer_u<Scalar>(256, min_exponent, max_exponent);
  const Array<Scalar> taus = Array<Scalar>::LinSpaced(256, Scalar(10), Scalar(50));
  for (const Scalar dt : {Scalar(0.01), Scalar(0.3), Scalar(5), Scalar(200)}) {
    std::feclearexcept(FE_ALL_EXCEPT);
    const Array<Scalar> plain = (u * (-dt / taus)).exp();
    barrier(plain.data());
    EXPECT_TRUE(std::fetestexcept(FE_UNDERFLOW)) << "the plain formula underflows, dt = " << dt;
    std::feclearexcept(FE_ALL_EXCEPT);
    const Array<Scalar> decays = BoxCell::decays(u, dt, taus);
    barrier(decays.data());
    EXPECT_FALSE(std::fetestexcept(FE_UNDERFLOW)) << "the decays underflow, dt = " << dt;
    EXPECT_TRUE(bitwise_equal(decays, plain));
  }
}

TEST(Decays, NoSubnormalIntermediateForTinyU) {
  no_underflow_for_tiny_u<float>(-126, -20);
  no_underflow_for_tiny_u<double>(-1022, -40);
}

// Pre-activations over every magnitude: 0, subnormals, every binade up to 2^10 with both signs,
// the bands where the unclamped exponentials or quotients are subnormal (a_u near +-88, a_z near
// +-44 in float; +-709 and +-354 in double), NaN and the infinities.
template <class Scalar>
std::vector<Scalar> every_magnitude_of_a() {
  using L = std::numeric_limits<Scalar>;
  std::vector<Scalar> a = {Scalar(0), L::denorm_min(), L::quiet_NaN(), L::infinity(),
                           -L::infinity()};
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int e = L::min_exponent - 1; e <= 10; ++e)
    for (int k = 0; k < 4; ++k) {
      const auto v = static_cast<Scalar>(std::ldexp(mantissa(rng), e - 1));
      a.push_back(v), a.push_back(-v);
    }
  const double band = sizeof(Scalar) == 4 ? 88.0 : 709.0;
  for (double x = band - 2; x < band + 2; x += 0.01)
    for (const double v : {x, -x, x / 2, -x / 2}) a.push_back(static_cast<Scalar>(v));
  return a;
}

template <class Scalar>
void gates_are_the_plain_formula_bitwise() {
  const std::vector<Scalar> as = every_magnitude_of_a<Scalar>();
  const auto n = static_cast<Eigen::Index>(as.size());
  const Array<Scalar> a = Eigen::Map<const Array<Scalar>>(as.data(), n);
  // a as a_u and as a_z, and reversed, so that every value meets every lane of a packet.
  for (const Array<Scalar>& a_u : {a, Array<Scalar>(a.reverse())}) {
    const Array<Scalar> a_z = a.reverse();
    Array<Scalar> u(n), z(n);
    egret::EgruGates<Scalar>::gates(a_u, a_z, u, z);
    const Array<Scalar> plain_u = (Scalar(1) + (-a_u).exp()).inverse();
    const Array<Scalar> plain_z =
        Scalar(1) - Scalar(2) * (Scalar(1) + (Scalar(2) * a_z).exp()).inverse();
    EXPECT_TRUE(bitwise_equal(u, plain_u));
    EXPECT_TRUE(bitwise_equal(z, plain_z));
  }
}

TEST(Gates, EqualThePlainFormulaBitwise) {
  gates_are_the_plain_formula_bitwise<float>();
  gates_are_the_plain_formula_bitwise<double>();
}

// The exponential's subnormal band (a_u just above 87.3, a_z just below -43.7 in float) and z's
// quotient band (a_z just above 44): the plain formula underflows there, the gates do not. (u's
// own quotient band, a_u in (-88.7, -87.3), is left: u itself is subnormal there.)
template <class Scalar>
void gates_do_not_underflow(double exp_band) {
  std::vector<Scalar> au, az;
  for (double x = 0.05; x < 1.0; x += 0.05) {
    au.push_back(static_cast<Scalar>(exp_band + x)), au.push_back(Scalar(0.3));
    az.push_back(static_cast<Scalar>(-(exp_band + x) / 2));
    az.push_back(static_cast<Scalar>((exp_band + 0.8 + x / 2) / 2));
  }
  const auto n = static_cast<Eigen::Index>(au.size());
  const Array<Scalar> a_u = Eigen::Map<const Array<Scalar>>(au.data(), n);
  const Array<Scalar> a_z = Eigen::Map<const Array<Scalar>>(az.data(), n);
  std::feclearexcept(FE_ALL_EXCEPT);
  const Array<Scalar> plain_u = (Scalar(1) + (-a_u).exp()).inverse();
  const Array<Scalar> plain_z =
      Scalar(1) - Scalar(2) * (Scalar(1) + (Scalar(2) * a_z).exp()).inverse();
  barrier(plain_u.data()), barrier(plain_z.data());
  EXPECT_TRUE(std::fetestexcept(FE_UNDERFLOW)) << "the plain formula underflows";
  Array<Scalar> u(n), z(n);
  std::feclearexcept(FE_ALL_EXCEPT);
  egret::EgruGates<Scalar>::gates(a_u, a_z, u, z);
  barrier(u.data()), barrier(z.data());
  EXPECT_FALSE(std::fetestexcept(FE_UNDERFLOW)) << "the gates underflow";
  EXPECT_TRUE(bitwise_equal(u, plain_u));
  EXPECT_TRUE(bitwise_equal(z, plain_z));
}

TEST(Gates, NoSubnormalIntermediateOnBusyInput) {
  gates_do_not_underflow<float>(87.35);
  gates_do_not_underflow<double>(708.4);
}

// Entries below 2^26 times the smallest normal number become +0; the rest keep their bits.
template <class Scalar>
void flush_keeps_what_it_should() {
  using Limits = std::numeric_limits<Scalar>;
  const Scalar t = egret::kNearlySubnormal<Scalar>;
  EXPECT_EQ(t, std::ldexp(Limits::min(), 26));
  const std::vector<Scalar> below = {Limits::denorm_min(),
                                     -Limits::denorm_min(),
                                     Limits::min(),
                                     -Limits::min(),
                                     t / 2,
                                     -t * Scalar(0.999),
                                     -Scalar(0)};
  const std::vector<Scalar> kept = {Scalar(0),
                                    t,
                                    -t,
                                    t * Scalar(1.5),
                                    Scalar(1),
                                    Scalar(-3e-20),
                                    Limits::max(),
                                    Limits::infinity(),
                                    -Limits::infinity(),
                                    Limits::quiet_NaN()};
  std::vector<Scalar> all = below;
  all.insert(all.end(), kept.begin(), kept.end());
  Array<Scalar> a = Eigen::Map<const Array<Scalar>>(all.data(), all.size());
  egret::flush_nearly_subnormal(a);
  for (std::size_t i = 0; i < below.size(); ++i) {
    EXPECT_EQ(a[i], Scalar(0)) << below[i];
    EXPECT_FALSE(std::signbit(a[i])) << below[i];
  }
  for (std::size_t i = 0; i < kept.size(); ++i)
    EXPECT_EQ(std::memcmp(&a[below.size() + i], &kept[i], sizeof(Scalar)), 0) << kept[i];
}

TEST(NearlySubnormal, FlushZeroesOnlyWhatIsBelowTheThreshold) {
  flush_keeps_what_it_should<float>();
  flush_keeps_what_it_should<double>();
}

}  // namespace
