// The energy module's public face: code outside src/modules/energy imports from here only.
export { createEnergyService, type Billing, type EnergyAction, type EnergyService, type EnergyState } from './energy.service.js';
