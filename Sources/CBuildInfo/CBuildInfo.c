#include "CBuildInfo.h"

#ifndef OPENWEATHER_EXPORTER_VERSION
#define OPENWEATHER_EXPORTER_VERSION "dev"
#endif
#ifndef OPENWEATHER_EXPORTER_REVISION
#define OPENWEATHER_EXPORTER_REVISION "dev"
#endif

const char *openweather_exporter_build_version(void) { return OPENWEATHER_EXPORTER_VERSION; }
const char *openweather_exporter_build_revision(void) { return OPENWEATHER_EXPORTER_REVISION; }
