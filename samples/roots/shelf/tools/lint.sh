#!/bin/sh
exec phpcs app
