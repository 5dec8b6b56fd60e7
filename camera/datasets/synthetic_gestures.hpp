// A synthetic DVS128 Gesture-like dataset: 11 classes of arm and hand motions, rendered as
// intensity frames at a high frame rate and turned into events by the contrast-threshold sensor
// model (camera/dvs_sensor_model.hpp). Users differ in body position, size, speed and hand size;
// lighting conditions in brightness and noise. Deterministic per seed.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "camera/dvs_sensor_model.hpp"
#include "events/random.hpp"

namespace egret {

struct GestureStyle {     // one synthetic "user"
  double center_x = 0.5;  // body centre, fraction of the frame width
  double scale = 1.0;     // body size
  double speed = 1.0;     // motion frequency factor
  double hand_radius = 0.055;
  double phase = 0.0;  // start phase of the motion [rad]
};

struct Lighting {
  std::string name = "led";
  double brightness = 1.0;  // scales every intensity
  double noise_hz = 0.5;    // shot noise per pixel
};

inline const std::array<Lighting, 4>& gesture_lightings() {
  static const std::array<Lighting, 4> l = {
      Lighting{"fluorescent", 0.8, 0.5}, Lighting{"led", 1.0, 0.3}, Lighting{"natural", 1.3, 0.2},
      Lighting{"lab", 0.5, 1.0}};
  return l;
}

inline GestureStyle random_style(std::mt19937_64& rng) {
  GestureStyle s;
  s.center_x = 0.5 + 0.08 * (detail::uniform01(rng) - 0.5);
  s.scale = 0.9 + 0.2 * detail::uniform01(rng);
  s.speed = 0.8 + 0.4 * detail::uniform01(rng);
  s.hand_radius = 0.045 + 0.02 * detail::uniform01(rng);
  s.phase = 6.283185307179586 * detail::uniform01(rng);
  return s;
}

// Hand positions (fractions of the frame, y down) of class `cls` at time t [s].
struct Hands {
  double rx, ry, lx, ly;
};

inline Hands gesture_hands(int cls, double t, const GestureStyle& s,
                           const std::array<double, 12>& rnd) {
  const double PI2 = 6.283185307179586;
  const double f = s.speed, k = s.scale, cx = s.center_x, ph = s.phase;
  const double rest_y = 0.5 + 0.28 * k;
  Hands h{cx + 0.15 * k, rest_y, cx - 0.15 * k, rest_y};  // both hands resting low
  switch (cls) {
    case 0: {  // hand_clapping: hands meet and part in front of the chest
      const double a = 0.05 + 0.1 * k * 0.5 * (1 + std::cos(PI2 * 2 * f * t + ph));
      h = {cx + a, 0.55, cx - a, 0.55};
      break;
    }
    case 1:  // right_hand_wave (image right)
      h.rx = cx + 0.25 * k + 0.08 * k * std::sin(PI2 * 2 * f * t + ph);
      h.ry = 0.3;
      break;
    case 2:  // left_hand_wave
      h.lx = cx - 0.25 * k + 0.08 * k * std::sin(PI2 * 2 * f * t + ph);
      h.ly = 0.3;
      break;
    case 3:    // right_arm_clockwise (increasing angle is clockwise with y down)
    case 4: {  // right_arm_counter_clockwise
      const double th = (cls == 3 ? 1 : -1) * PI2 * f * t + ph;
      h.rx = cx + 0.22 * k + 0.13 * k * std::cos(th);
      h.ry = 0.45 + 0.13 * k * std::sin(th);
      break;
    }
    case 5:    // left_arm_clockwise
    case 6: {  // left_arm_counter_clockwise
      const double th = (cls == 5 ? 1 : -1) * PI2 * f * t + ph;
      h.lx = cx - 0.22 * k + 0.13 * k * std::cos(th);
      h.ly = 0.45 + 0.13 * k * std::sin(th);
      break;
    }
    case 7: {  // arm_roll: hands circle around each other in front of the body
      const double th = PI2 * 1.5 * f * t + ph;
      h = {cx + 0.07 * k * std::cos(th), 0.55 + 0.07 * k * std::sin(th),
           cx - 0.07 * k * std::cos(th), 0.55 - 0.07 * k * std::sin(th)};
      break;
    }
    case 8: {  // air_drums: hands beat up and down alternately
      const double a = PI2 * 2 * f * t + ph;
      h = {cx + 0.15 * k, 0.62 + 0.08 * k * std::sin(a), cx - 0.15 * k,
           0.62 - 0.08 * k * std::sin(a)};
      break;
    }
    case 9:  // air_guitar: left hand on the neck, right hand strums fast
      h.lx = cx - 0.27 * k;
      h.ly = 0.42;
      h.rx = cx + 0.05 * k;
      h.ry = 0.6 + 0.06 * k * std::sin(PI2 * 3 * f * t + ph);
      break;
    default: {  // other_gestures: smooth random paths, different in every trial
      auto path = [&](int o, double centre_x, double centre_y) {
        double x = centre_x, y = centre_y;
        for (int j = 0; j < 3; ++j) {
          x += 0.05 * k *
               std::sin(PI2 * (0.3 + 1.5 * rnd[o + j]) * f * t + PI2 * rnd[(o + j + 3) % 12]);
          y += 0.05 * k *
               std::cos(PI2 * (0.3 + 1.5 * rnd[(o + j + 6) % 12]) * f * t +
                        PI2 * rnd[(o + j + 9) % 12]);
        }
        return std::pair<double, double>{x, y};
      };
      const auto r = path(0, cx + 0.15 * k, 0.5), l = path(2, cx - 0.15 * k, 0.5);
      h = {r.first, r.second, l.first, l.second};
    }
  }
  return h;
}

// Renders one gesture of `duration_us` as frames every `frame_us` and feeds them to the sensor;
// returns its events with times offset by t0_us.
inline std::vector<CameraEvent> render_gesture(int cls, const GestureStyle& style,
                                               const Lighting& light, double duration_us,
                                               double frame_us, DvsSensorModel& sensor,
                                               double t0_us, std::uint64_t seed) {
  const SensorSize sz = sensor.sensor();
  const int w = sz.width, hgt = sz.height;
  std::mt19937_64 rng(seed);
  std::array<double, 12> rnd{};
  for (auto& v : rnd) v = detail::uniform01(rng);
  // Static scene: textured background and a torso with a head.
  std::vector<float> background(static_cast<std::size_t>(w) * hgt);
  for (int y = 0; y < hgt; ++y)
    for (int x = 0; x < w; ++x) {
      const double tex = 0.5 + 0.15 * std::sin(0.37 * x + 1.3 * std::sin(0.11 * y)) +
                         0.1 * std::cos(0.23 * y - 0.7 * std::cos(0.13 * x));
      const double fx = (x + 0.5) / w, fy = (y + 0.5) / hgt;
      const bool torso =
          std::abs(fx - style.center_x) < 0.13 * style.scale && fy > 0.35 && fy < 0.95;
      const bool head = std::hypot(fx - style.center_x, fy - 0.22) < 0.09 * style.scale;
      background[static_cast<std::size_t>(y) * w + x] =
          static_cast<float>(light.brightness * (torso || head ? 0.25 : tex));
    }
  std::vector<float> frame(background.size());
  std::vector<CameraEvent> out;
  auto draw = [&](double fx, double fy, double radius, float value) {
    const int x0 = std::max(0, static_cast<int>((fx - radius) * w)),
              x1 = std::min(w - 1, static_cast<int>((fx + radius) * w) + 1);
    const int y0 = std::max(0, static_cast<int>((fy - radius) * hgt)),
              y1 = std::min(hgt - 1, static_cast<int>((fy + radius) * hgt) + 1);
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x)
        if (std::hypot((x + 0.5) / w - fx, (y + 0.5) / hgt - fy) < radius)
          frame[static_cast<std::size_t>(y) * w + x] = value;
  };
  auto arm = [&](double sx, double sy, double hx, double hy) {
    for (int k = 0; k <= 16; ++k) {
      const double a = k / 16.0;
      draw(sx + a * (hx - sx), sy + a * (hy - sy), 0.022 * style.scale,
           static_cast<float>(0.6 * light.brightness));
    }
  };
  const float skin = static_cast<float>(0.95 * light.brightness);
  for (double t = 0; t <= duration_us; t += frame_us) {
    frame = background;
    const Hands h = gesture_hands(cls, t * 1e-6, style, rnd);
    arm(style.center_x + 0.13 * style.scale, 0.4, h.rx, h.ry);
    arm(style.center_x - 0.13 * style.scale, 0.4, h.lx, h.ly);
    draw(h.rx, h.ry, style.hand_radius * style.scale, skin);
    draw(h.lx, h.ly, style.hand_radius * style.scale, skin);
    sensor.add_frame(frame, t0_us + t, out);
  }
  return out;
}

}  // namespace egret
