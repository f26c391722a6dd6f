//===- Private.h - a private header, reflowed banner, no SPDX -*- C++
//-*-===//

#ifndef DTENSOR_COMPILER_STAGE_PRIVATE_H
#define DTENSOR_COMPILER_STAGE_PRIVATE_H

#endif // DTENSOR_COMPILER_STAGE_PRIVATE_H
