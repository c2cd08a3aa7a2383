#include "CTLS.h"
