/**
 * `local.sdn.cozystack.io/v1alpha1`, the contract between the core and its
 * drivers: types, constants, condition types and reasons, index keys and the
 * binding rules. Nothing here pulls in TypeBox at run time; the schemas the
 * CRDs are written from live in ./schema/, which only the constructs import.
 */
export * from './binding.js';
export * from './class-access.js';
export * from './conditions.js';
export * from './duplicates.js';
export * from './group.js';
export * from './holders.js';
export * from './index-keys.js';
export * from './phases.js';
export * from './types.js';
export * from './well-known.js';
