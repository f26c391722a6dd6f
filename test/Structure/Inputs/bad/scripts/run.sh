#!/bin/sh
echo no license
