// The forecast module's public face: code outside src/modules/forecast imports from here only.
export { createForecastService, MAX_FORECAST_DAYS, type ForecastService, type SimulatedEngine } from './forecast.service.js';
export { ForecastBody, ForecastResponse, forecastRoutes } from './forecast.routes.js';
