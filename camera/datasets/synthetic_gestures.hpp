// A synthetic DVS128 Gesture-like dataset: 11 classes of arm and hand motions, rendered as
// intensity frames at a high frame rate and turned into events by the contrast-threshold sensor
// model (camera/dvs_sensor_model.hpp). Deterministic per seed.
//
// What makes it hard, as the real set is (docs/datasets.md):
// - users differ in body position and size, speed, amplitude, hand size, handedness (a
//   left-handed user strums the air guitar and leads the arm roll with the other hand), how much
//   the body sways, and the room behind them;
// - every trial varies again: speed and amplitude by about 15 %, a late onset (the hands rest
//   first), a random phase, and sometimes someone walking past in the background;
// - the lighting conditions of the real set: fluorescent (a lamp in view flickering at 100 Hz),
//   fluorescent_led, led, natural (slow brightness drift, clouds) and lab (dim: more shot noise);
// - sensor noise: shot noise, leak and hot pixels;
// - class pairs that differ only in the direction of motion (clockwise / counter-clockwise), so
//   the temporal order matters.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "camera/dvs_sensor_model.hpp"
#include "events/random.hpp"

namespace egret {

struct GestureStyle {      // one synthetic "user"
  double center_x = 0.5;   // body centre, fraction of the frame width
  double center_y = 0.0;   // vertical offset of the whole body, fraction of the frame height
  double scale = 1.0;      // body size
  double speed = 1.0;      // motion frequency factor
  double amplitude = 1.0;  // size of the hands' motion
  double hand_radius = 0.055;
  bool left_handed = false;
  double sway = 0.0;  // amplitude of the body's sideways sway, fraction of the frame
  double sway_hz = 0.3;
  double room_phase = 0.0;  // the background texture (the room) differs per user
  double contrast = 1.0;    // how much darker the body is than the room
};

struct GestureTrial {      // one performance of a gesture
  double speed = 1.0;      // times the user's
  double amplitude = 1.0;  // times the user's
  double phase = 0.0;      // start phase of the motion [rad]
  double onset_s = 0.0;    // the hands rest until then
  bool walker = false;     // someone walks past in the background
  double walker_speed = 0.3, walker_y = 0.2, walker_from = -0.2;  // frames widths per second
  std::array<double, 12> path{};  // the random path of other_gestures
};

struct Lighting {
  std::string name = "led";
  double brightness = 1.0;  // scales every intensity
  double noise_hz = 0.3;    // shot noise per pixel
  double flicker = 0.0;     // relative 100 Hz modulation of the lamp in view (fluorescent)
  double drift = 0.0;       // relative slow drift of the whole scene (natural light)
};

// The five conditions of the real set (DvsGesture's file names).
inline const std::array<Lighting, 5>& gesture_lightings() {
  static const std::array<Lighting, 5> l = {
      Lighting{"fluorescent", 0.8, 0.5, 0.3, 0.0}, Lighting{"fluorescent_led", 0.9, 0.4, 0.2, 0.0},
      Lighting{"led", 1.0, 0.3, 0.0, 0.0}, Lighting{"natural", 1.2, 0.2, 0.0, 0.25},
      Lighting{"lab", 0.45, 0.7, 0.0, 0.0}};
  return l;
}

inline const Lighting& gesture_lighting(const std::string& name) {
  for (const auto& l : gesture_lightings())
    if (l.name == name) return l;
  throw std::invalid_argument("synthetic gestures: unknown lighting '" + name +
                              "' (fluorescent, fluorescent_led, led, natural, lab)");
}

inline double uniform_in(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * detail::uniform01(rng);
}

inline GestureStyle random_style(std::mt19937_64& rng) {
  GestureStyle s;
  s.center_x = uniform_in(rng, 0.38, 0.62);
  s.center_y = uniform_in(rng, -0.06, 0.06);
  s.scale = uniform_in(rng, 0.75, 1.2);
  s.speed = uniform_in(rng, 0.65, 1.45);
  s.amplitude = uniform_in(rng, 0.7, 1.3);
  s.hand_radius = uniform_in(rng, 0.04, 0.065);
  s.left_handed = detail::uniform01(rng) < 0.2;
  s.sway = uniform_in(rng, 0.0, 0.03);
  s.sway_hz = uniform_in(rng, 0.15, 0.6);
  s.room_phase = uniform_in(rng, 0, 100);
  s.contrast = uniform_in(rng, 0.5, 1.0);
  return s;
}

inline GestureTrial random_trial(std::mt19937_64& rng) {
  GestureTrial t;
  t.speed = uniform_in(rng, 0.85, 1.15);
  t.amplitude = uniform_in(rng, 0.85, 1.15);
  t.phase = uniform_in(rng, 0, 6.283185307179586);
  t.onset_s = uniform_in(rng, 0, 0.3);
  t.walker = detail::uniform01(rng) < 0.25;
  t.walker_speed = uniform_in(rng, 0.25, 0.6) * (detail::uniform01(rng) < 0.5 ? 1 : -1);
  t.walker_y = uniform_in(rng, 0.1, 0.35);
  t.walker_from = uniform_in(rng, -0.3, 0.3);
  for (auto& v : t.path) v = detail::uniform01(rng);
  return t;
}

// Hand positions (fractions of the frame, y down) of class `cls` at time t [s].
struct Hands {
  double rx, ry, lx, ly;
};

// The hands of a right-handed performance; left-handed users mirror the gestures that are not
// defined by the hand (air guitar, arm roll, air drums, other gestures).
inline Hands gesture_hands_right_handed(int cls, double t, double cx, double cy, double k, double f,
                                        double amp, double ph, const std::array<double, 12>& rnd) {
  const double PI2 = 6.283185307179586;
  const double a = k * amp;
  const double rest_y = cy + 0.5 + 0.28 * k;
  Hands h{cx + 0.15 * k, rest_y, cx - 0.15 * k, rest_y};  // both hands resting low
  switch (cls) {
    case 0: {  // hand_clapping: hands meet and part in front of the chest
      const double d = 0.05 + 0.1 * a * 0.5 * (1 + std::cos(PI2 * 2 * f * t + ph));
      h = {cx + d, cy + 0.55, cx - d, cy + 0.55};
      break;
    }
    case 1:  // right_hand_wave (image right)
      h.rx = cx + 0.25 * k + 0.08 * a * std::sin(PI2 * 2 * f * t + ph);
      h.ry = cy + 0.3;
      break;
    case 2:  // left_hand_wave
      h.lx = cx - 0.25 * k + 0.08 * a * std::sin(PI2 * 2 * f * t + ph);
      h.ly = cy + 0.3;
      break;
    case 3:    // right_arm_clockwise (increasing angle is clockwise with y down)
    case 4: {  // right_arm_counter_clockwise
      const double th = (cls == 3 ? 1 : -1) * PI2 * f * t + ph;
      h.rx = cx + 0.22 * k + 0.13 * a * std::cos(th);
      h.ry = cy + 0.45 + 0.13 * a * std::sin(th);
      break;
    }
    case 5:    // left_arm_clockwise
    case 6: {  // left_arm_counter_clockwise
      const double th = (cls == 5 ? 1 : -1) * PI2 * f * t + ph;
      h.lx = cx - 0.22 * k + 0.13 * a * std::cos(th);
      h.ly = cy + 0.45 + 0.13 * a * std::sin(th);
      break;
    }
    case 7: {  // arm_roll: hands circle around each other in front of the body
      const double th = PI2 * 1.5 * f * t + ph;
      h = {cx + 0.07 * a * std::cos(th), cy + 0.55 + 0.07 * a * std::sin(th),
           cx - 0.07 * a * std::cos(th), cy + 0.55 - 0.07 * a * std::sin(th)};
      break;
    }
    case 8: {  // air_drums: hands beat up and down alternately
      const double s = std::sin(PI2 * 2 * f * t + ph);
      h = {cx + 0.15 * k, cy + 0.62 + 0.08 * a * s, cx - 0.15 * k, cy + 0.62 - 0.08 * a * s};
      break;
    }
    case 9:  // air_guitar: left hand on the neck, right hand strums fast
      h.lx = cx - 0.27 * k;
      h.ly = cy + 0.42;
      h.rx = cx + 0.05 * k;
      h.ry = cy + 0.6 + 0.06 * a * std::sin(PI2 * 3 * f * t + ph);
      break;
    default: {  // other_gestures: smooth random paths, different in every trial
      auto path = [&](int o, double centre_x, double centre_y) {
        double x = centre_x, y = centre_y;
        for (int j = 0; j < 3; ++j) {
          x += 0.05 * a *
               std::sin(PI2 * (0.3 + 1.5 * rnd[o + j]) * f * t + PI2 * rnd[(o + j + 3) % 12]);
          y += 0.05 * a *
               std::cos(PI2 * (0.3 + 1.5 * rnd[(o + j + 6) % 12]) * f * t +
                        PI2 * rnd[(o + j + 9) % 12]);
        }
        return std::pair<double, double>{x, y};
      };
      const auto r = path(0, cx + 0.15 * k, cy + 0.5), l = path(2, cx - 0.15 * k, cy + 0.5);
      h = {r.first, r.second, l.first, l.second};
    }
  }
  return h;
}

// The body's centre at time t [s] (it sways).
inline double body_center_x(const GestureStyle& s, double t) {
  return s.center_x + s.sway * std::sin(6.283185307179586 * s.sway_hz * t + s.room_phase);
}

inline Hands gesture_hands(int cls, double t, const GestureStyle& s, const GestureTrial& trial) {
  const double cx = body_center_x(s, t), k = s.scale;
  if (t < trial.onset_s) {  // resting before the gesture starts
    const double rest_y = s.center_y + 0.5 + 0.28 * k;
    return {cx + 0.15 * k, rest_y, cx - 0.15 * k, rest_y};
  }
  const double tt = t - trial.onset_s, f = s.speed * trial.speed;
  const double amp = s.amplitude * trial.amplitude;
  const bool mirror = s.left_handed && (cls == 7 || cls == 8 || cls == 9 || cls == 10);
  const Hands h =
      gesture_hands_right_handed(cls, tt, cx, s.center_y, k, f, amp, trial.phase, trial.path);
  if (!mirror) return h;
  // Mirror about the body's centre line: the right hand does what the left did.
  return {2 * cx - h.lx, h.ly, 2 * cx - h.rx, h.ry};
}

// The user's room, lit by `light` (before the lamp's flicker and the drift).
inline std::vector<float> gesture_room(const GestureStyle& style, const Lighting& light, int w,
                                       int hgt) {
  std::vector<float> room(static_cast<std::size_t>(w) * hgt);
  const double p = style.room_phase;
  for (int y = 0; y < hgt; ++y)
    for (int x = 0; x < w; ++x) {
      const double tex = 0.5 +
                         0.15 * std::sin((0.3 + 0.002 * p) * x + 1.3 * std::sin(0.11 * y + p)) +
                         0.1 * std::cos(0.23 * y - 0.7 * std::cos(0.13 * x + 0.5 * p));
      room[static_cast<std::size_t>(y) * w + x] = static_cast<float>(light.brightness * tex);
    }
  return room;
}

// Renders one gesture of `duration_us` as frames every `frame_us` and feeds them to the sensor;
// returns its events with times offset by t0_us.
inline std::vector<CameraEvent> render_gesture(int cls, const GestureStyle& style,
                                               const GestureTrial& trial, const Lighting& light,
                                               double duration_us, double frame_us,
                                               DvsSensorModel& sensor, double t0_us) {
  const SensorSize sz = sensor.sensor();
  const int w = sz.width, hgt = sz.height;
  const std::vector<float> room = gesture_room(style, light, w, hgt);
  std::vector<float> frame(room.size());
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
  auto box = [&](double fx0, double fy0, double fx1, double fy1, float value) {
    const int x0 = std::max(0, static_cast<int>(fx0 * w)),
              x1 = std::min(w, static_cast<int>(fx1 * w));
    const int y0 = std::max(0, static_cast<int>(fy0 * hgt)),
              y1 = std::min(hgt, static_cast<int>(fy1 * hgt));
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) frame[static_cast<std::size_t>(y) * w + x] = value;
  };
  const double k = style.scale, cy = style.center_y;
  const float body = static_cast<float>(light.brightness * (0.5 - 0.3 * style.contrast));
  const float sleeve = static_cast<float>(0.6 * light.brightness);
  const float skin = static_cast<float>(0.95 * light.brightness);
  const double PI2 = 6.283185307179586;
  for (double t = 0; t <= duration_us; t += frame_us) {
    const double ts = t * 1e-6;
    // The whole scene's slow drift (natural light).
    const double drift =
        1 + light.drift * std::sin(PI2 * 0.4 * (ts + t0_us * 1e-6) + style.room_phase);
    for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<float>(room[i] * drift);
    if (light.flicker > 0) {  // the lamp in view, at twice the mains frequency
      const double lamp =
          light.brightness * 1.6 * (1 + light.flicker * std::sin(PI2 * 100 * (ts + t0_us * 1e-6)));
      box(0.05 + 0.1 * std::sin(style.room_phase), 0.02, 0.22 + 0.1 * std::sin(style.room_phase),
          0.07, static_cast<float>(lamp));
    }
    if (trial.walker) {  // someone passing behind: a tall dim shape
      const double x =
          trial.walker_from + (trial.walker_speed > 0 ? 0 : 1) + trial.walker_speed * ts;
      box(x - 0.06, trial.walker_y, x + 0.06, 0.9,
          static_cast<float>(0.3 * light.brightness * drift));
    }
    const double cx = body_center_x(style, ts);
    box(cx - 0.13 * k, cy + 0.35, cx + 0.13 * k, 1.0, body);  // torso
    draw(cx, cy + 0.22, 0.09 * k, body);                      // head
    const Hands h = gesture_hands(cls, ts, style, trial);
    auto arm = [&](double sx, double sy, double hx, double hy) {
      for (int j = 0; j <= 16; ++j) {
        const double a = j / 16.0;
        draw(sx + a * (hx - sx), sy + a * (hy - sy), 0.022 * k, sleeve);
      }
    };
    arm(cx + 0.13 * k, cy + 0.4, h.rx, h.ry);
    arm(cx - 0.13 * k, cy + 0.4, h.lx, h.ly);
    draw(h.rx, h.ry, style.hand_radius * k, skin);
    draw(h.lx, h.ly, style.hand_radius * k, skin);
    sensor.add_frame(frame, t0_us + t, out);
  }
  return out;
}

}  // namespace egret
