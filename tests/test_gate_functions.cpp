// The vectorised gate functions (models/shared/gate_functions.hpp) against libm in double: the
// accuracy stated in the header, the special values, and that an element's result does not
// depend on its position in the array (whole packet or padded tail).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "models/rhythmic_gate/open_units.hpp"
#include "models/shared/gate_functions.hpp"
#include "models/shared/interleaved_rows.hpp"
#include "models/shared/row_dots.hpp"

namespace {

using egret::vector_logistic;
using egret::vector_tanh;

std::vector<float> float_grid() {
  std::vector<float> x;
  for (double v = -30; v <= 30; v += 1.0 / 4096) x.push_back(static_cast<float>(v));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -1e-8f, 9.0f, -9.0f, 15.7243833f, 88.0f,
                  -88.0f, 100.0f, -100.0f, 1e30f, -1e30f})
    x.push_back(v);
  return x;
}

TEST(GateFunctions, FloatLogisticWithinItsStatedErrorOfLibm) {
  const auto x = float_grid();
  std::vector<float> y(x.size());
  vector_logistic(x.data(), y.data(), static_cast<Eigen::Index>(x.size()));
  // Eigen fits logistic(x) - 1/2 (and takes e^x below x = -9): the error is small against 1, not
  // against small values (relative up to 1e-3 near x = -9).
  double worst = 0, worst_relative = 0;  // the latter for x >= -2
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = 1.0 / (1.0 + std::exp(-double(x[i])));
    const double err = std::abs(double(y[i]) - exact);
    worst = std::max(worst, err);
    ASSERT_LE(err, 2e-7) << "x = " << x[i] << ": " << y[i] << " against " << exact;
    if (x[i] >= -2.0f) {
      worst_relative = std::max(worst_relative, err / exact);
      ASSERT_LE(err / exact, 7e-7) << "x = " << x[i] << ": " << y[i] << " against " << exact;
    }
    ASSERT_GE(y[i], 0.0f);
    ASSERT_LE(y[i], 1.0f);
  }
  std::printf(
      "  float logistic: worst absolute error %.2e, relative %.2e for x >= -2, "
      "over %zu points\n",
      worst, worst_relative, x.size());
}

TEST(GateFunctions, FloatTanhWithinItsStatedErrorOfLibm) {
  const auto x = float_grid();
  std::vector<float> y(x.size());
  vector_tanh(x.data(), y.data(), static_cast<Eigen::Index>(x.size()));
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::tanh(double(x[i]));
    const double err = std::abs(double(y[i]) - exact);
    worst = std::max(worst, err);
    ASSERT_LE(err, 6e-7) << "x = " << x[i] << ": " << y[i] << " against " << exact;
    ASSERT_LE(std::abs(y[i]), 1.0f);
  }
  std::printf("  float tanh: worst absolute error %.2e over %zu points\n", worst, x.size());
}

TEST(GateFunctions, DoubleWithinTwoUlpOfLibm) {
  std::vector<double> x;
  for (double v = -40; v <= 40; v += 1.0 / 1024) x.push_back(v);
  std::vector<double> lg(x.size()), th(x.size());
  vector_logistic(x.data(), lg.data(), static_cast<Eigen::Index>(x.size()));
  vector_tanh(x.data(), th.data(), static_cast<Eigen::Index>(x.size()));
  const double eps = std::numeric_limits<double>::epsilon();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = 1.0 / (1.0 + std::exp(-x[i]));
    ASSERT_LE(std::abs(lg[i] - exact), 4 * eps * exact) << "x = " << x[i];
    ASSERT_LE(std::abs(th[i] - std::tanh(x[i])), 2 * eps) << "x = " << x[i];
  }
}

TEST(GateFunctions, InfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {inf, -inf, nan};
  std::vector<float> lg(3), th(3);
  vector_logistic(x.data(), lg.data(), 3);
  vector_tanh(x.data(), th.data(), 3);
  EXPECT_EQ(lg[0], 1.0f);
  EXPECT_LE(lg[1], 1e-38f);  // 0, or a denormal without AVX
  EXPECT_GE(lg[1], 0.0f);
  EXPECT_TRUE(std::isnan(lg[2]));
  EXPECT_EQ(th[0], 1.0f);
  EXPECT_EQ(th[1], -1.0f);
  EXPECT_TRUE(std::isnan(th[2]));
}

// The same value at every position and array length: whole packets and the padded tail agree.
TEST(GateFunctions, ResultDoesNotDependOnThePositionInTheArray) {
  const auto grid = float_grid();
  for (std::size_t n = 1; n <= 37; ++n) {
    for (std::size_t start = 0; start + n <= 4000; start += 997) {
      std::vector<float> x(grid.begin() + static_cast<std::ptrdiff_t>(start),
                           grid.begin() + static_cast<std::ptrdiff_t>(start + n));
      std::vector<float> lg(n), th(n);
      vector_logistic(x.data(), lg.data(), static_cast<Eigen::Index>(n));
      vector_tanh(x.data(), th.data(), static_cast<Eigen::Index>(n));
      for (std::size_t i = 0; i < n; ++i) {
        float one_lg, one_th;
        vector_logistic(&x[i], &one_lg, 1);
        vector_tanh(&x[i], &one_th, 1);
        ASSERT_EQ(lg[i], one_lg) << "n = " << n << ", i = " << i;
        ASSERT_EQ(th[i], one_th) << "n = " << n << ", i = " << i;
      }
    }
  }
}

// three_row_dots against a sum in long double, for lengths around the packet sizes (whole
// packets, the second accumulator, the scalar tail, none): within the textbook bound of a float
// or double dot product, d eps sum |a b| (exact for small whole numbers, whose sums are exact).
template <class Scalar>
void check_three_row_dots(bool whole_numbers) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> real(-1, 1);
  std::uniform_int_distribution<int> whole(-8, 8);
  for (Eigen::Index d : {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 100, 257}) {
    std::vector<Scalar> rows(static_cast<std::size_t>(3 * d)), v(static_cast<std::size_t>(d));
    auto draw = [&] { return static_cast<Scalar>(whole_numbers ? whole(rng) : real(rng)); };
    for (auto& x : rows) x = draw();
    for (auto& x : v) x = draw();
    Scalar out[3] = {Scalar(-99), Scalar(-99), Scalar(-99)};
    egret::three_row_dots(rows.data(), v.data(), d, out);
    for (int g = 0; g < 3; ++g) {
      long double exact = 0, magnitude = 0;
      for (Eigen::Index j = 0; j < d; ++j) {
        const long double p = static_cast<long double>(rows[static_cast<std::size_t>(g * d + j)]) *
                              static_cast<long double>(v[static_cast<std::size_t>(j)]);
        exact += p;
        magnitude += std::fabs(p);
      }
      const long double bound =
          whole_numbers
              ? 0.0L
              : static_cast<long double>(d) * std::numeric_limits<Scalar>::epsilon() * magnitude;
      EXPECT_LE(std::fabs(static_cast<long double>(out[g]) - exact), bound)
          << "d = " << d << ", row " << g;
    }
  }
}

TEST(RowDots, ThreeRowsAgainstALongDoubleSum) {
  check_three_row_dots<float>(false);
  check_three_row_dots<double>(false);
  check_three_row_dots<float>(true);
  check_three_row_dots<double>(true);
}

// The tiled row-major copy: row G m + g is row m of gate g, element for element, for shapes
// around the 16 x 16 tile (whole tiles, partial ones, a single row or column, none).
TEST(InterleavedRows, EveryElementInItsPlace) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const std::pair<Eigen::Index, Eigen::Index> shapes[] = {{0, 5},  {5, 0},   {1, 1},   {1, 40},
                                                          {40, 1}, {16, 16}, {17, 33}, {64, 48}};
  for (const auto& [rows, cols] : shapes) {
    std::array<egret::Matrix<float>, 3> m;
    for (auto& g : m) {
      g.resize(rows, cols);
      for (Eigen::Index i = 0; i < g.size(); ++i) g.data()[i] = value(rng);
    }
    const auto three = egret::interleaved_rows<float, 3>({&m[0], &m[1], &m[2]});
    const auto one = egret::interleaved_rows<float, 1>({&m[1]});
    ASSERT_EQ(three.rows(), 3 * rows);
    ASSERT_EQ(three.cols(), cols);
    ASSERT_EQ(one.rows(), rows);
    for (Eigen::Index r = 0; r < rows; ++r)
      for (Eigen::Index c = 0; c < cols; ++c) {
        for (Eigen::Index g = 0; g < 3; ++g)
          ASSERT_EQ(three(3 * r + g, c), m[static_cast<std::size_t>(g)](r, c))
              << rows << "x" << cols;
        ASSERT_EQ(one(r, c), m[1](r, c));
      }
  }
  egret::Matrix<float> a(2, 3), b(3, 2);
  EXPECT_THROW((egret::interleaved_rows<float, 2>({&a, &b})), std::logic_error);
}

// The open units of a tick: exactly those with a > 0, in order; 0, -0 and NaN are closed; none
// and all open.
TEST(OpenUnits, GathersExactlyThePositiveActivationsInOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> cases = {
      {},
      {0.0f},
      {1e-30f},
      {-1.0f, -0.0f, 0.0f, nan, -1e-30f},
      {1.0f, 2.0f, 3.0f, 4.0f},
      {0.5f, -0.5f, 0.0f, 2.0f, nan, 1e-38f, -3.0f, 7.0f},
  };
  egret::OpenUnits open;
  for (const auto& a : cases) {
    Eigen::VectorXf activations(static_cast<Eigen::Index>(a.size()));
    for (std::size_t i = 0; i < a.size(); ++i) activations[static_cast<Eigen::Index>(i)] = a[i];
    open.resize(activations.size());
    open.gather(activations);
    std::vector<Eigen::Index> expected, got;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] > 0.0f) expected.push_back(static_cast<Eigen::Index>(i));
    for (Eigen::Index i = 0; i < open.size(); ++i) got.push_back(open[i]);
    EXPECT_EQ(got, expected) << a.size() << " units";
  }
}

}  // namespace
