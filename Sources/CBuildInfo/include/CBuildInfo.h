#ifndef C_BUILD_INFO_H
#define C_BUILD_INFO_H

// What the build was made from. Swift's -D flags carry no values, so the release
// script (Tests/release/build.sh) stamps these through the C compiler:
//   -Xcc -DOPENWEATHER_EXPORTER_VERSION='"0.1.0"' -Xcc -DOPENWEATHER_EXPORTER_REVISION='"<commit>"'
// Nothing tracked is edited and a plain `swift build` says "dev".
const char *openweather_exporter_build_version(void);
const char *openweather_exporter_build_revision(void);

#endif
