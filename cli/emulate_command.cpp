// `egret emulate`: the DVS sensor model on a sequence of PNG frames.
#include <cstdio>
#include <stdexcept>

#include "camera/formats/camera_readers.hpp"
#include "camera/formats/frame_files.hpp"
#include "cli/commands.hpp"

namespace egret::cli {

// The DVS sensor model on a frame sequence (images.txt with PNG frames) -> AEDAT 3.1.
int run_emulate(const Args& args) {
  if (!args.options.count("--frames") || !args.options.count("--out"))
    throw std::invalid_argument("emulate needs --frames IMAGES.txt --out EVENTS.aedat");
  egret::cli::check_output_file(args.options.at("--out"), "--out");
  egret::DvsSensorConfig cfg;
  cfg.eps = 0.1;  // lin-log floor for noisy APS frames
  const auto rec = egret::emulate_events_from_frames(args.options.at("--frames"), cfg);
  egret::write_aedat31(args.options.at("--out"), rec.events, rec.sensor);
  std::size_t on = 0;
  for (const auto& e : rec.events) on += e.p;
  std::printf("%zu events (ON share %.3f) from %dx%d frames written to %s (AEDAT 3.1)\n",
              rec.events.size(),
              rec.events.empty() ? 0.0 : static_cast<double>(on) / rec.events.size(),
              rec.sensor.width, rec.sensor.height, args.options.at("--out").c_str());
  return 0;
}

}  // namespace egret::cli
