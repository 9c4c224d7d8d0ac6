#pragma once
#define WRFGPU_VERSION "0.1.0"
